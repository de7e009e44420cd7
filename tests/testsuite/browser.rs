//! In headless Chromium, driven over WebDriver (plain HTTP + JSON to chromedriver), against `locref serve`
//! (which sends the site's strict Content-Security-Policy with every page):
//! - a page reloads by itself after an edit that changes it, and shows a failed build's diagnostics in an
//!   overlay until the fix;
//! - the try-it control of `/api/` fetches `/api/v1/countries/it.json` and shows it;
//! - an old `/#<country>-<erp>` link lands on the matrix row;
//! - no page of the site logs a console error (a CSP violation would be one);
//! - the search box finds a country, an ERP and a fact as the reader types, and `/search/` lists results;
//!   a title (a name) match ranks before a mention in a text, the words found are highlighted, and case,
//!   accents and punctuation are folded alike in the index and the query (`verifactu` finds "VERI*FACTU");
//! - at 390 px the Countries panel lists every country in one column that scrolls down, every answer
//!   shows its grade beside it, and the try-it controls of `/api/` look like the site's other controls;
//! - the matrix's filters (region, B2B mandate, ERP, hide what is not established) show what they say and
//!   keep the choice in the address;
//! - the home page's map is recoloured by the toggle the reader picks;
//! - the comparison page shows the countries of its address side by side (a code it does not know is
//!   said to be left out), and a change of the choice changes the address;
//! - every kind of page (one of each, from the route table) has no violation of axe-core's WCAG 2.1 A and
//!   AA rules at 1280 and 390 px, nor the home page with the search box's results open;
//! - the search box is an ARIA combobox the keyboard drives (arrow keys, Enter, Escape);
//! - the keyboard: Tab reaches the map's switch before its countries (drawn above the map on a phone), a
//!   focused country's ring is drawn above its neighbours, and every matrix cell Tab reaches is wholly in
//!   view inside the grid, clear of its sticky headings, at 1280 and 390 px.
//!
//! Screenshots of the home, a country, the matrix, the API, an ERP, the VAT reporting and the licence pages
//! (desktop and phone widths) are saved to `target/screenshots/` for review.
//!
//! A plain `cargo test` reports these tests as ignored: they need Chromium and chromedriver (and axe-core,
//! for the accessibility tests). `cargo test --test testsuite browser:: -- --ignored` runs them (`.ci/run`
//! does, after installing all three), and then a missing browser or a missing axe-core fails them: a
//! browser test never passes without what it needs. axe-core comes from its npm package, outside the site:
//! `LOCREF_AXE_JS` names its `axe.min.js`, which the test puts into each page through WebDriver (script
//! execution is not subject to the page's Content-Security-Policy; the site never ships axe).

use std::collections::{BTreeMap, BTreeSet};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::served::{Served, serve};
use locref::kinds::RendererOf;
use locref::locref_site::SITE;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Fails the test, with what to install, when the browser is missing.
fn require_browser() {
    assert!(
        Path::new(CHROMIUM).is_file() && Path::new(CHROMEDRIVER).is_file(),
        "{CHROMIUM} or {CHROMEDRIVER} is not installed (Debian: apt-get install chromium chromium-driver)"
    );
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
        let body = body.map(|b| b.to_string());
        let reply = crate::common::http::send(&self.address, method, path, body.as_deref());
        serde_json::from_slice(&reply.body).unwrap_or(Value::Null)
    }
}

/// The WebDriver element reference key.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A headless Chromium session on its own chromedriver; the session ends on drop.
struct Browser {
    driver: Driver,
    id: String,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        self.driver
            .call("DELETE", &format!("/session/{}", self.id), None);
    }
}

impl Browser {
    fn start() -> Browser {
        Browser::launch(json!({}))
    }

    /// A browser that runs no page script (Chromium's content setting for JavaScript, blocked), as a
    /// reader with scripts off sees the site. WebDriver's own scripts still run.
    fn start_without_scripts() -> Browser {
        Browser::launch(json!({"profile.managed_default_content_settings.javascript": 2}))
    }

    fn launch(prefs: Value) -> Browser {
        let driver = Driver::start();
        let profile = tempfile::tempdir().unwrap();
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            // axe-core takes a few seconds on the largest pages.
            "timeouts": {"script": 120_000},
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "prefs": prefs,
                "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                         "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                         "--window-size=1280,900",
                         format!("--user-data-dir={}", profile.path().display())]
            },
            "goog:loggingPrefs": {"browser": "ALL"}
        }}});
        let session = driver.call("POST", "/session", Some(capabilities));
        let id = session["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {session}"))
            .to_string();
        Browser {
            driver,
            id,
            _profile: profile,
        }
    }

    fn command(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        self.driver
            .call(method, &format!("/session/{}{path}", self.id), body)["value"]
            .clone()
    }

    fn goto(&self, url: &str) {
        self.command("POST", "/url", Some(json!({ "url": url })));
    }

    fn script(&self, code: &str) -> Value {
        self.command(
            "POST",
            "/execute/sync",
            Some(json!({"script": code, "args": []})),
        )
    }

    /// Runs `code` as the body of an async function whose last argument is the callback that returns.
    fn script_async(&self, code: &str) -> Value {
        self.command(
            "POST",
            "/execute/async",
            Some(json!({"script": code, "args": []})),
        )
    }

    /// Presses and releases `key` (a WebDriver key code such as [`TAB`]) where the focus is.
    fn press(&self, key: &str) {
        let done = self.command(
            "POST",
            "/actions",
            Some(
                json!({"actions": [{"type": "key", "id": "keyboard", "actions": [
                    {"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}
                ]}]}),
            ),
        );
        assert!(done.is_null(), "pressing {key:?}: {done}");
    }

    /// Clicks the element matching `css`, as a user would (WebDriver element click).
    fn click(&self, css: &str) {
        let found = self.command(
            "POST",
            "/element",
            Some(json!({"using": "css selector", "value": css})),
        );
        let element = found[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("no element {css}: {found}"))
            .to_string();
        let clicked = self.command(
            "POST",
            &format!("/element/{element}/click"),
            Some(json!({})),
        );
        assert!(clicked.is_null(), "click on {css}: {clicked}");
    }

    /// Types `text` into the element matching `css`, as a user would (WebDriver element send keys).
    fn type_into(&self, css: &str, text: &str) {
        let found = self.command(
            "POST",
            "/element",
            Some(json!({"using": "css selector", "value": css})),
        );
        let element = found[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("no element {css}: {found}"))
            .to_string();
        let typed = self.command(
            "POST",
            &format!("/element/{element}/value"),
            Some(json!({ "text": text })),
        );
        assert!(typed.is_null(), "typing into {css}: {typed}");
    }

    /// Polls `code` until it returns `true`.
    fn wait_for(&self, what: &str, code: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.script(code) != json!(true) {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The console entries logged as errors since the last call (reading the log clears it).
    fn console_errors(&self) -> Vec<Value> {
        let logs = self.command("POST", "/se/log", Some(json!({"type": "browser"})));
        logs.as_array()
            .map(|l| {
                l.iter()
                    .filter(|e| e["level"] == "SEVERE")
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    fn resize(&self, width: u32, height: u32) {
        self.command(
            "POST",
            "/window/rect",
            Some(json!({"width": width, "height": height})),
        );
    }

    /// Saves a PNG of the viewport to `target/screenshots/<name>.png`.
    fn screenshot(&self, name: &str) {
        use base64::Engine;
        let data = self.command("GET", "/screenshot", None);
        let png = base64::engine::general_purpose::STANDARD
            .decode(data.as_str().expect("screenshot data"))
            .expect("base64 PNG");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .parent()
            .unwrap()
            .join("screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }
}

/// WebDriver key codes.
const TAB: &str = "\u{E004}";
const ENTER: &str = "\u{E007}";
const ESCAPE: &str = "\u{E00C}";
const ARROW_UP: &str = "\u{E013}";
const ARROW_DOWN: &str = "\u{E015}";

/// The widths every page is checked at: a desktop window and a phone.
const WIDTHS: [(u32, u32); 2] = [(1280, 900), (390, 844)];

/// The elements (outside scrolling table wrappers) that reach past the window's right edge, for a failure
/// message.
const WIDER_THAN_THE_WINDOW: &str = "return [document.documentElement.scrollWidth, innerWidth].concat([...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > innerWidth + 0.5).slice(0, 8).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)))";

fn url(served: &Served, path: &str) -> String {
    format!("http://{}{path}", served.address)
}

#[test]
#[ignore = "needs Chromium and chromedriver"]
fn a_served_page_reloads_after_an_edit_shows_build_errors_and_logs_no_console_error() {
    require_browser();
    let served = serve();
    let browser = Browser::start();
    browser.goto(&url(&served, "/it/"));
    assert_eq!(browser.script("return document.documentElement.lang"), "en");
    assert!(
        browser
            .script("return document.body.innerText")
            .as_str()
            .unwrap()
            .contains("Italy")
    );
    // Mark this page load; a reload clears the mark. Give the event stream a moment to connect.
    browser.script("window.__locref_mark = 1; return true");
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
    browser.wait_for(
        "the page to reload with the edit",
        "return window.__locref_mark === undefined && document.body.innerText.includes('edited in the browser test')",
    );

    // A broken source shows its diagnostics over the page (which keeps the last good build); the fix
    // clears the overlay.
    let vat = served.project.path().join("sources/tables/vat.csv");
    let vat_text = std::fs::read_to_string(&vat).unwrap();
    std::fs::write(&vat, vat_text.replacen("country_code,", "country,", 1)).unwrap();
    browser.wait_for(
        "the error overlay",
        "const o = document.getElementById('__locref_error'); return !!o && o.textContent.includes('sources/tables/vat.csv:1:1')",
    );
    assert!(
        browser
            .script("return document.body.innerText")
            .as_str()
            .unwrap()
            .contains("edited in the browser test")
    );
    std::fs::write(&vat, vat_text).unwrap();
    browser.wait_for(
        "the overlay to clear after the fix",
        "return document.getElementById('__locref_error') === null",
    );
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}

#[test]
#[ignore = "needs Chromium and chromedriver"]
fn try_it_fetches_a_country_and_shows_it_with_the_curl_line() {
    require_browser();
    let served = serve();
    let browser = Browser::start();
    browser.goto(&url(&served, "/api/"));
    // The country parameter appears with its endpoint, and only then.
    assert_eq!(
        browser.script("return document.getElementById('try-code').closest('p').hidden"),
        true
    );
    browser.click("#try-endpoint option[value='/api/v1/countries/{code}.json']");
    assert_eq!(
        browser.script("return document.getElementById('try-code').closest('p').hidden"),
        false
    );
    browser.click("#try-code option[value='it']");
    let expected = url(&served, "/api/v1/countries/it.json");
    assert_eq!(
        browser.script("return document.getElementById('try-curl').textContent"),
        format!("curl -sS '{expected}'")
    );
    browser.click("#try-send");
    browser.wait_for(
        "the response",
        "return document.getElementById('try-status').textContent.startsWith('200')",
    );
    let body = browser.script("return document.getElementById('try-body').textContent");
    let shown: Value = serde_json::from_str(body.as_str().unwrap()).expect("the body is JSON");
    assert_eq!(shown["data"]["code"], "it");
    assert_eq!(shown["data"]["name"], "Italy");
    assert!(
        body.as_str().unwrap().contains("\n  \"meta\": {"),
        "formatted with indentation"
    );
    let headers = browser.script("return document.getElementById('try-headers').innerText");
    let headers = headers.as_str().unwrap();
    assert!(
        headers.contains("application/json") && headers.contains("access-control-allow-origin"),
        "{headers}"
    );
    browser.screenshot("api-try-it");
    // Another endpoint: the ERP parameter replaces the country one.
    browser.click("#try-endpoint option[value='/api/v1/erps/{id}.json']");
    assert_eq!(
        browser.script("return [document.getElementById('try-code').closest('p').hidden, document.getElementById('try-id').closest('p').hidden]"),
        json!([true, false])
    );
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}

#[test]
#[ignore = "needs Chromium and chromedriver"]
fn an_old_home_page_link_lands_on_the_matrix_row() {
    require_browser();
    let served = serve();
    let browser = Browser::start();
    browser.goto(&url(&served, "/#it-odoo"));
    browser.wait_for(
        "the forward to the matrix",
        "return location.pathname === '/e-invoicing/' && location.hash === '#it-odoo'",
    );
    browser.wait_for(
        "the page to load",
        "return document.readyState === 'complete'",
    );
    assert_eq!(
        browser.script("const t = document.querySelector(':target'); return t && t.id"),
        "it-odoo"
    );
    // The cell (Italy's row, Odoo's column) is scrolled into view and not hidden under the matrix's
    // sticky headings: what is drawn at its centre is the cell itself.
    let seen = browser.script(
        "const c = document.getElementById('it-odoo'); const r = c.getBoundingClientRect(); \
         const e = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2); \
         return [r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth, !!e && c.contains(e)]",
    );
    assert_eq!(seen, json!([true, true]), "[in the viewport, not covered]");
    assert_eq!(
        browser.script("const c = document.getElementById('it-odoo'); return [c.dataset.erp, c.parentElement.id]"),
        json!(["odoo", "it"])
    );
    assert!(
        browser
            .script("return document.querySelector('#it-odoo a').title")
            .as_str()
            .unwrap()
            .starts_with("Odoo in Italy: ")
    );
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}

#[test]
#[ignore = "needs Chromium and chromedriver"]
fn no_page_logs_a_console_error_under_the_sites_csp() {
    require_browser();
    let served = serve();
    let mut session = locref::session::Session::in_memory(served.project.path(), &SITE).unwrap();
    session.build();
    let pages: Vec<String> = session
        .site()
        .keys()
        .filter(|p| p.ends_with(".html"))
        .map(|p| p.strip_suffix("index.html").unwrap_or(p).to_string())
        .collect();
    assert!(pages.len() > 90, "{} pages", pages.len());
    let browser = Browser::start();
    let mut failures = Vec::new();
    for page in &pages {
        browser.goto(&url(&served, page));
        browser.wait_for(page, "return document.readyState === 'complete'");
        let errors = browser.console_errors();
        if !errors.is_empty() {
            failures.push(format!("{page}: {errors:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "console errors:\n{}",
        failures.join("\n")
    );
    // Screenshots for review, at desktop and phone widths.
    for (name, page) in [
        ("home", "/"),
        ("country-it", "/it/"),
        ("matrix", "/e-invoicing/"),
        ("api", "/api/"),
        ("erp-odoo", "/erp/odoo/"),
        ("calendar", "/calendar/"),
        ("search", "/search/?q=italy"),
        ("vat-reporting", "/vat-reporting/"),
        ("saf-t", "/saf-t/"),
        ("licence", "/licence/"),
    ] {
        browser.resize(1280, 900);
        browser.goto(&url(&served, page));
        browser.screenshot(&format!("{name}-desktop"));
        // At 1280 px nothing scrolls sideways: not the page, and not the reporting tables, whose ERP
        // columns unknown in every row are folded into one line.
        assert_eq!(
            browser.script("return document.documentElement.scrollWidth <= innerWidth"),
            true,
            "{page} scrolls sideways at 1280 px"
        );
        if page.ends_with("reporting/") || page == "/saf-t/" {
            assert_eq!(
                browser.script("const w = document.querySelector('.table-wrap'); return w.scrollWidth <= w.clientWidth"),
                true,
                "{page}: the table scrolls sideways at 1280 px"
            );
        }
        browser.resize(390, 844);
        browser.goto(&url(&served, page));
        browser.screenshot(&format!("{name}-phone"));
        // On a phone the page itself never scrolls sideways; wide tables scroll in their wrapper.
        assert_eq!(
            browser.script("return document.documentElement.scrollWidth <= innerWidth"),
            true,
            "{page} scrolls sideways on a phone; too wide: {}",
            browser.script(WIDER_THAN_THE_WINDOW)
        );
        if page == "/calendar/" {
            // Each phase is a card whose scope text takes the phone's width, not a narrow column.
            let widths = browser.script(
                "const r = e => Math.round(e.getBoundingClientRect().width); \
                 return [r(document.querySelector('table.phases tbody tr')), r(document.querySelector('table.phases td.text'))]",
            );
            let (card, scope) = (widths[0].as_i64().unwrap(), widths[1].as_i64().unwrap());
            assert!(
                card >= 330 && scope >= card - 40,
                "card {card} px, scope {scope} px"
            );
        }
    }
}

#[test]
#[ignore = "needs Chromium and chromedriver"]
fn the_search_box_finds_countries_erps_and_facts_as_the_reader_types() {
    require_browser();
    let served = serve();
    let browser = Browser::start();
    browser.goto(&url(&served, "/calendar/"));
    browser.wait_for("the page", "return document.readyState === 'complete'");
    browser.click("#site-q");
    browser.type_into("#site-q", "odoo");
    browser.wait_for(
        "the results under the box",
        "const p = document.querySelector('.search-popup'); return !!p && !p.hidden && p.querySelectorAll('a.result').length > 0",
    );
    // The product itself ranks first, marked as an ERP; the link to every result goes to /search/.
    let first = browser.script(
        "const a = document.querySelector('.search-popup a.result'); return [a.querySelector('.result-title').textContent, a.querySelector('.kind').textContent, new URL(a.href).pathname]",
    );
    assert_eq!(first, json!(["Odoo", "ERP", "/erp/odoo/"]));
    assert_eq!(
        browser.script("const a = document.querySelector('.search-popup a.search-all'); const u = new URL(a.href); return u.pathname + u.search"),
        "/search/?q=odoo"
    );
    // A country by a part of its name (accents and case folded), and the first result opens its page.
    browser.script("const i = document.getElementById('site-q'); i.value = ''; return null");
    browser.type_into("#site-q", "turk");
    browser.wait_for(
        "Türkiye",
        "const a = document.querySelector('.search-popup a.result .result-title'); return !!a && a.textContent === 'Türkiye'",
    );
    browser.click(".search-popup a.result");
    browser.wait_for("the country page", "return location.pathname === '/tr/'");
    // The results page: a fact found by words of its text, linked to its anchor on the country page.
    browser.goto(&url(&served, "/search/?q=italy+standard+rate"));
    browser.wait_for("the results", "return !!document.getElementById('results')");
    let fact = browser.script(
        "const a = [...document.querySelectorAll('#search-page-results a.result')].find(a => a.querySelector('.result-title').textContent === 'Italy · VAT / GST'); return a ? new URL(a.href).pathname + new URL(a.href).hash : null",
    );
    assert_eq!(fact, "/it/#it-vat");
    assert_eq!(
        browser.script("return document.getElementById('page-q').value"),
        "italy standard rate"
    );
    // A result's text is cut between words, around the word searched for.
    browser.goto(&url(&served, "/search/?q=peppol"));
    browser.wait_for("the results", "return !!document.getElementById('results')");
    let shown = browser.script(
        "return [...document.querySelectorAll('#search-page-results a.result')].map(a => [a.querySelector('.result-title').textContent, (a.querySelector('.result-text') || {}).textContent || ''])",
    );
    let index: Value = serde_json::from_slice(
        &crate::common::http::get(&served.address, "/search-index.json").body,
    )
    .unwrap();
    let items = index["items"].as_array().unwrap();
    let mut cut = 0;
    for pair in shown.as_array().unwrap() {
        let (title, snippet) = (pair[0].as_str().unwrap(), pair[1].as_str().unwrap());
        let piece = snippet.trim_start_matches("… ").trim_end_matches(" …");
        let text = items
            .iter()
            .filter(|i| i["t"] == title)
            .filter_map(|i| i["s"].as_str())
            .find(|text| text.contains(piece))
            .unwrap_or_else(|| panic!("{title}: {snippet:?} is not its text"));
        let at = text.find(piece).unwrap();
        let before = text[..at].chars().next_back();
        let after = text[at + piece.len()..].chars().next();
        assert!(
            before.is_none_or(char::is_whitespace) && after.is_none_or(char::is_whitespace),
            "{title}: {snippet:?} cuts a word"
        );
        if text.to_lowercase().contains("peppol") {
            assert!(
                piece.to_lowercase().contains("peppol"),
                "{title}: {snippet:?}"
            );
        }
        cut += usize::from(piece.len() < text.len());
    }
    assert!(
        cut > 0,
        "no result's text was long enough to be cut: {shown}"
    );
    browser.goto(&url(&served, "/search/?q=zzzzqqq"));
    browser.wait_for(
        "nothing found",
        "const h = document.getElementById('results'); return !!h && h.textContent.startsWith('Nothing found')",
    );
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}

#[test]
#[ignore = "needs Chromium and chromedriver"]
fn the_matrix_filters_show_what_they_say_and_keep_the_choice_in_the_address() {
    require_browser();
    let served = serve();
    let browser = Browser::start();
    browser.goto(&url(&served, "/e-invoicing/"));
    browser.wait_for(
        "the filters",
        "return !document.getElementById('matrix-filters').hidden",
    );
    let visible_rows = "return [...document.querySelectorAll('table.matrix tbody tr')].filter(r => r.offsetParent !== null).map(r => r.id)";
    assert_eq!(browser.script(visible_rows).as_array().unwrap().len(), 61);
    // Region: only the rows of that region, counted.
    browser.click("#f-region option[value='Americas']");
    let americas = browser.script("return [...document.querySelectorAll('table.matrix tbody tr')].filter(r => r.dataset.region === 'Americas').map(r => r.id)");
    assert!(americas.as_array().unwrap().len() >= 3, "{americas}");
    assert_eq!(browser.script(visible_rows), americas);
    let shown = americas.as_array().unwrap().len();
    assert_eq!(
        browser.script("return document.getElementById('f-count').textContent"),
        format!("Showing {shown} of 61 countries.")
    );
    assert_eq!(browser.script("return location.search"), "?region=Americas");
    // One ERP: its column only; then hiding what is not established leaves the rows where it is known.
    browser.click("#f-region option[value='']");
    browser.click("#f-erp option[value='odoo']");
    assert_eq!(
        browser.script("return [...document.querySelectorAll('table.matrix thead th[data-erp]')].filter(c => c.offsetParent !== null).map(c => c.dataset.erp)"),
        json!(["odoo"])
    );
    browser.click("#f-known");
    let known = browser.script("return [...document.querySelectorAll('table.matrix td[data-erp=odoo]')].filter(c => !c.classList.contains('s-unknown')).map(c => c.parentElement.id)");
    assert!(known.as_array().unwrap().len() > 10, "{known}");
    assert_eq!(browser.script(visible_rows), known);
    assert_eq!(
        browser.script("return location.search"),
        "?erp=odoo&established=1"
    );
    // B2B mandate status: the rows whose mandate has that status.
    browser.click("#f-known");
    browser.click("#f-erp option[value='']");
    browser.click("#f-mandate option[value='in-force']");
    let in_force = browser.script("return [...document.querySelectorAll('table.matrix tbody tr')].filter(r => r.dataset.mandate === 'in-force').map(r => r.id)");
    assert_eq!(browser.script(visible_rows), in_force);
    assert!(in_force.as_array().unwrap().iter().any(|c| c == "it"));
    // The B2B e-invoicing model: the rows of the countries whose B2B e-invoicing model today the API
    // gives as that model (a model still to come is not today's), in the address too.
    browser.click("#f-mandate option[value='']");
    let regimes: Value = serde_json::from_slice(
        &crate::common::http::get(&served.address, "/api/v1/regimes.json").body,
    )
    .unwrap();
    let clearance: BTreeSet<&str> = regimes["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["obligation"] == "b2b-e-invoicing"
                && r["model"]["id"] == "clearance"
                && r["current"] == true
        })
        .map(|r| r["country"].as_str().unwrap())
        .collect();
    assert!(!clearance.is_empty());
    browser.click("#f-model option[value='clearance']");
    let shown = browser.script(visible_rows);
    let shown: BTreeSet<&str> = shown
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(shown, clearance);
    assert_eq!(browser.script("return location.search"), "?model=clearance");
    browser.goto(&url(&served, "/e-invoicing/?model=clearance&region=Europe"));
    browser.wait_for(
        "the filters",
        "return !document.getElementById('matrix-filters').hidden",
    );
    assert_eq!(
        browser.script("return [document.getElementById('f-model').value, document.getElementById('f-region').value]"),
        json!(["clearance", "Europe"])
    );
    browser.goto(&url(&served, "/e-invoicing/"));
    browser.wait_for(
        "the filters",
        "return !document.getElementById('matrix-filters').hidden",
    );
    // A shared address restores the view, and a cell's anchor still lands on it.
    browser.goto(&url(
        &served,
        "/e-invoicing/?region=Europe&erp=odoo#fr-odoo",
    ));
    browser.wait_for(
        "the filters",
        "return !document.getElementById('matrix-filters').hidden",
    );
    assert_eq!(
        browser.script("return [document.getElementById('f-region').value, document.getElementById('f-erp').value, document.querySelector(':target') && document.querySelector(':target').id]"),
        json!(["Europe", "odoo", "fr-odoo"])
    );
    assert!(
        browser
            .script(visible_rows)
            .as_array()
            .unwrap()
            .iter()
            .all(|id| browser.script(&format!(
                "return document.getElementById('{}').dataset.region",
                id.as_str().unwrap()
            )) == "Europe")
    );
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}

#[test]
#[ignore = "needs Chromium and chromedriver"]
fn the_home_map_is_coloured_by_the_toggle_the_reader_picks() {
    require_browser();
    let served = serve();
    let browser = Browser::start();
    browser.goto(&url(&served, "/"));
    browser.wait_for("the page", "return document.readyState === 'complete'");
    // Italy: a B2B mandate (t0 true), no SAF-T (t4 false), as its classes on the map say.
    let italy_fill = "const s = document.querySelector('svg.fig-map a[href=\"/it/\"] path'); return getComputedStyle(s).fill";
    let classes = browser.script(
        "return document.querySelector('svg.fig-map a[href=\"/it/\"]').getAttribute('class')",
    );
    assert!(
        classes.as_str().unwrap().contains("t0-true")
            && classes.as_str().unwrap().contains("t4-false"),
        "{classes}"
    );
    // The map's colours are its legend's.
    let swatch = |value: &str| {
        browser.script(&format!(
            "return getComputedStyle(document.querySelector('.map-legend-t0 .legend-{value}'), '::before').backgroundColor"
        ))
    };
    let yes = browser.script(italy_fill);
    assert_eq!(yes, swatch("true"));
    let legend_shown = |i: usize| {
        browser.script(&format!(
            "return getComputedStyle(document.querySelector('.map-legend-t{i}')).display !== 'none'"
        ))
    };
    assert_eq!(legend_shown(0), true);
    assert_eq!(legend_shown(4), false);
    // A yes limited to part of its scope (Hungary's sectors, India's threshold) is dotted, not the plain
    // yes, and its legend counts it apart.
    let limited = browser.script(
        "const a = [...document.querySelectorAll('svg.fig-map a.t0-true.t0-qualified')]; \
         return {countries: new Set(a.map(x => x.getAttribute('href'))).size, fills: a.map(x => getComputedStyle(x).fill)}",
    );
    let countries = limited["countries"].as_u64().unwrap();
    let limited = limited["fills"].as_array().unwrap();
    assert!(
        !limited.is_empty(),
        "some yes of the first toggle is limited"
    );
    for fill in limited {
        assert!(fill.as_str().unwrap().contains("#map-limited"), "{fill}");
    }
    let legend_limited = browser.script(
        "const l = document.querySelector('.map-legend-t0 .legend-limited'); return l && l.textContent",
    );
    assert!(
        legend_limited
            .as_str()
            .is_some_and(|t| t.ends_with(&format!(": {countries}"))),
        "{legend_limited}"
    );
    browser.click("label[for='map-t4']");
    assert_eq!(
        browser.script("return document.getElementById('map-t4').checked"),
        true
    );
    assert_eq!(browser.script(italy_fill), swatch("false"));
    assert_eq!(legend_shown(0), false);
    assert_eq!(legend_shown(4), true);
    assert_eq!(
        browser.script("return location.search"),
        browser.script("return '?map=' + document.getElementById('map-t4').value")
    );
    // The B2B e-invoicing model: each country coloured as its legend says for the model the API gives
    // for its B2B e-invoicing, hatched where none is recorded; the choice kept in the address.
    browser.click("label[for='map-model']");
    assert_eq!(browser.script("return location.search"), "?map=model");
    let regimes: Value = serde_json::from_slice(
        &crate::common::http::get(&served.address, "/api/v1/regimes.json").body,
    )
    .unwrap();
    let b2b_model = |code: &str| -> Option<String> {
        regimes["data"]
            .as_array()
            .unwrap()
            .iter()
            // Today's B2B model only: a model of a mandate still to come is not on the map.
            .find(|r| {
                r["country"] == code && r["obligation"] == "b2b-e-invoicing" && r["current"] == true
            })
            .and_then(|r| r["model"]["id"].as_str().map(str::to_string))
    };
    let fill = |code: &str| {
        browser.script(&format!(
            "return getComputedStyle(document.querySelector('svg.fig-map a[href=\"/{code}/\"] path')).fill"
        ))
    };
    let legend_swatch = |model: &str| {
        browser.script(&format!(
            "return getComputedStyle(document.querySelector('.map-legend-model .legend-model-{model}'), '::before').backgroundColor"
        ))
    };
    assert_eq!(
        browser.script("return getComputedStyle(document.querySelector('.map-legend-model')).display !== 'none'"),
        true
    );
    // A fill by pattern reads `url("#id") rgb(…)`: the pattern, then the colour it falls back to.
    let colour_of = |fill: &Value| -> Value {
        let fill = fill.as_str().unwrap();
        json!(fill.rsplit_once(") ").map_or(fill, |(_, colour)| colour))
    };
    let mut seen = BTreeSet::new();
    for code in crate::common::COUNTRY_CODES.split(' ') {
        if let Some(model) = b2b_model(code) {
            // Told apart by its texture as well as its hue: each model fills with a pattern of its own.
            let filled = fill(code);
            assert!(
                filled
                    .as_str()
                    .unwrap()
                    .contains(&format!("#map-model-{model}\"")),
                "{code}: {model}: {filled}"
            );
            assert_eq!(colour_of(&filled), legend_swatch(&model), "{code}: {model}");
            seen.insert(model);
        } else {
            assert!(
                fill(code).as_str().unwrap().starts_with("url("),
                "{code}: hatched"
            );
        }
    }
    assert!(seen.len() >= 3, "{seen:?}");
    // A shared address restores the colouring.
    browser.goto(&url(&served, "/?map=model"));
    browser.wait_for("the page", "return document.readyState === 'complete'");
    assert_eq!(
        browser.script("return document.getElementById('map-model').checked"),
        true
    );
    // A country on the map opens its page.
    browser.click("svg.fig-map a[href='/br/']");
    browser.wait_for("Brazil's page", "return location.pathname === '/br/'");
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}

#[test]
#[ignore = "needs Chromium and chromedriver"]
fn a_sortable_table_sorts_by_the_heading_the_reader_presses() {
    require_browser();
    let served = serve();
    let browser = Browser::start();
    browser.goto(&url(&served, "/"));
    browser.wait_for(
        "the sort buttons",
        "return document.querySelectorAll('table.sortable thead button.sort').length > 0",
    );
    let first_rows = "return [...document.querySelectorAll('table.toggles-table tbody tr')].slice(0, 3).map(r => r.cells[0].textContent.trim())";
    // Built in order of name; the first press on "Country" keeps that order (ascending), the second
    // reverses it, and aria-sort says which.
    assert_eq!(
        browser.script(first_rows),
        json!(["Albania", "Andorra", "Argentina"])
    );
    browser.click("table.toggles-table thead th:nth-child(1) button.sort");
    assert_eq!(
        browser.script("return document.querySelector('table.toggles-table thead th:nth-child(1)').getAttribute('aria-sort')"),
        "ascending"
    );
    assert_eq!(
        browser.script(first_rows),
        json!(["Albania", "Andorra", "Argentina"])
    );
    browser.click("table.toggles-table thead th:nth-child(1) button.sort");
    let last = browser.script("return [...document.querySelectorAll('table.toggles-table tbody tr')].map(r => r.cells[0].textContent.trim())");
    let names: Vec<&str> = last
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 61);
    let mut sorted = names.clone();
    sorted.sort_by_key(|n| std::cmp::Reverse(locref::ids::slugify(n)));
    assert_eq!(names, sorted, "descending by name");
    // By region: every row of a region together, regions in order.
    browser.click("table.toggles-table thead th:nth-child(2) button.sort");
    let regions = browser.script("return [...document.querySelectorAll('table.toggles-table tbody tr')].map(r => r.cells[1].textContent.trim())");
    let regions: Vec<&str> = regions
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let mut by_region = regions.clone();
    by_region.sort();
    assert_eq!(regions, by_region);
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}

/// The tags of the axe-core rules run: WCAG 2.0 and 2.1, levels A and AA.
const WCAG_21_AA: [&str; 4] = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];

/// axe-core's `axe.min.js`, from the file `LOCREF_AXE_JS` names (`.ci/run` installs the npm package
/// outside the site and sets it). Fails, saying how to get it, when it is missing.
fn axe_source() -> String {
    let path = std::env::var("LOCREF_AXE_JS").unwrap_or_default();
    assert!(
        !path.is_empty() && Path::new(&path).is_file(),
        "LOCREF_AXE_JS must name axe-core's axe.min.js (found {path:?}); as .ci/run does: \
         npm install --prefix /tmp/locref-axe --ignore-scripts axe-core@4.14.1 && \
         export LOCREF_AXE_JS=/tmp/locref-axe/node_modules/axe-core/axe.min.js"
    );
    std::fs::read_to_string(&path).unwrap()
}

impl Browser {
    /// Puts axe-core into the page as it stands and runs its WCAG 2.1 A and AA rules on the whole
    /// document: one readable line per violation (rule, impact, what it asks, the elements, a link).
    fn axe(&self, source: &str, what: &str) -> Vec<String> {
        let loaded = self.script(&format!(
            "{source}\n;return typeof axe === 'object' && axe.version"
        ));
        assert!(
            loaded.is_string(),
            "{what}: axe-core did not load into the page: {loaded}"
        );
        let run = self.script_async(&format!(
            "const done = arguments[arguments.length - 1]; \
             axe.run(document, {{runOnly: {{type: 'tag', values: {tags}}}, resultTypes: ['violations']}}) \
               .then(r => done({{passes: r.passes.length, violations: r.violations.map(v => ({{id: v.id, impact: v.impact, help: v.help, url: v.helpUrl, nodes: v.nodes.map(n => n.target.join(' '))}}))}})) \
               .catch(e => done({{error: String(e)}}))",
            tags = json!(WCAG_21_AA)
        ));
        assert!(
            run["error"].is_null(),
            "{what}: axe-core failed: {}",
            run["error"]
        );
        // A run that checked nothing would pass vacuously.
        assert!(
            run["passes"].as_u64().unwrap_or(0) > 0,
            "{what}: axe-core checked nothing: {run}"
        );
        run["violations"]
            .as_array()
            .expect("the violations")
            .iter()
            .map(|v| {
                let nodes: Vec<&str> = v["nodes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                format!(
                    "{what}: {} ({}): {}; {} element(s): {}{} ({})",
                    v["id"].as_str().unwrap_or(""),
                    v["impact"].as_str().unwrap_or(""),
                    v["help"].as_str().unwrap_or(""),
                    nodes.len(),
                    nodes.iter().take(5).copied().collect::<Vec<_>>().join(", "),
                    if nodes.len() > 5 { ", …" } else { "" },
                    v["url"].as_str().unwrap_or("")
                )
            })
            .collect()
    }
}

/// The country codes of the register, in its order.
fn register_codes(project: &Path) -> Vec<String> {
    let register = crate::common::read(project, "sources/registers/countries.csv");
    let mut reader = csv::Reader::from_reader(register.as_bytes());
    reader
        .records()
        .map(|r| r.unwrap()[0].to_string())
        .collect()
}

/// One page of each kind of the route table (`locref::routes`): the first HTML output of each page
/// renderer, as the path a browser asks for. The search page is asked a question, so its results show.
fn one_page_per_kind(project: &Path) -> Vec<String> {
    use locref::kinds::{Format, PageKind};
    use locref::routes::Renderer;
    let codes = register_codes(project);
    let project =
        locref::workspace::Project::load(project, &locref::locref_site::SITE).expect("the project");
    let mut kinds = BTreeSet::new();
    let mut pages = Vec::new();
    for output in locref::routes::outputs(&project.db) {
        let Renderer::Page(kind, Format::Html) = output.renderer() else {
            continue;
        };
        if kinds.insert(kind) {
            let path = output
                .path
                .strip_suffix("index.html")
                .unwrap_or(&output.path);
            let query = match kind {
                PageKind::Search => "?q=italy".to_string(),
                // The comparison page with countries chosen, so its side-by-side tables show.
                // With a day of the date control after the reference date, so its table is checked too.
                PageKind::Compare => format!("?c={}&on=2027-01-01", codes[..3].join(",")),
                _ => String::new(),
            };
            pages.push(format!("{path}{query}"));
        }
    }
    pages
}

#[test]
#[ignore = "needs Chromium, chromedriver and axe-core"]
fn every_page_kind_has_no_wcag_2_1_aa_violation_that_axe_finds_at_desktop_and_phone_widths() {
    require_browser();
    let axe = axe_source();
    let served = serve();
    let pages = one_page_per_kind(served.project.path());
    assert!(pages.len() >= 20, "{pages:?}");
    // The pages are served with the site's strict Content-Security-Policy, and axe-core still runs.
    let home = crate::common::http::get(&served.address, "/");
    let csp = home.header("Content-Security-Policy").unwrap_or_default();
    assert!(
        csp.contains("default-src 'self'"),
        "the page's CSP: {csp:?}"
    );
    let browser = Browser::start();
    let mut violations = Vec::new();
    let mut checked = 0;
    for (width, height) in WIDTHS {
        browser.resize(width, height);
        assert_eq!(
            browser.script("return innerWidth"),
            json!(width),
            "the window's width"
        );
        for page in &pages {
            browser.goto(&url(&served, page));
            // Loaded, and whatever a script fetches (the comparison page's columns) drawn.
            browser.wait_for(
                page,
                "return document.readyState === 'complete' && !document.querySelector('[aria-busy=true]')",
            );
            violations.extend(browser.axe(&axe, &format!("{width} px {page}")));
            checked += 1;
        }
        // The search box with its results open (the combobox expanded, an option active).
        browser.goto(&url(&served, "/"));
        browser.wait_for("the home page", "return document.readyState === 'complete'");
        browser.click("#site-q");
        browser.type_into("#site-q", "italy");
        browser.wait_for(
            "the results under the box",
            "const p = document.querySelector('.search-popup'); return !!p && !p.hidden && p.querySelectorAll('a.result').length > 1",
        );
        browser.press(ARROW_DOWN);
        violations.extend(browser.axe(&axe, &format!("{width} px / with the search results open")));
        checked += 1;
    }
    for (width, _) in WIDTHS {
        let prefix = format!("{width} px ");
        println!(
            "axe-core {} ({}) at {width} px: {} violations",
            browser.script("return axe.version"),
            WCAG_21_AA.join(", "),
            violations.iter().filter(|v| v.starts_with(&prefix)).count()
        );
    }
    println!("{checked} pages and states checked");
    // Loading axe-core broke no rule of the CSP (a violation is logged as a console error).
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    assert!(
        violations.is_empty(),
        "{} WCAG 2.1 A/AA violations found by axe-core:\n{}",
        violations.len(),
        violations.join("\n")
    );
}

#[test]
#[ignore = "needs Chromium, chromedriver and axe-core"]
fn the_search_box_is_a_combobox_the_keyboard_drives() {
    require_browser();
    let served = serve();
    let browser = Browser::start();
    browser.goto(&url(&served, "/calendar/"));
    browser.wait_for("the page", "return document.readyState === 'complete'");
    let state = "const i = document.getElementById('site-q'); const l = document.getElementById(i.getAttribute('aria-controls')); \
                 const a = i.getAttribute('aria-activedescendant'); \
                 return {role: i.getAttribute('role'), expanded: i.getAttribute('aria-expanded'), list: l && l.getAttribute('role'), \
                 shown: !!l && !l.closest('.search-popup').hidden, active: a, selected: a && document.getElementById(a).getAttribute('aria-selected'), \
                 focus: document.activeElement.id, options: l ? l.querySelectorAll('[role=option]').length : 0}";
    let closed = browser.script(state);
    assert_eq!(closed["role"], "combobox");
    assert_eq!(closed["expanded"], "false");
    assert_eq!(closed["list"], "listbox");
    browser.click("#site-q");
    browser.type_into("#site-q", "odoo");
    browser.wait_for(
        "the results under the box",
        "return document.getElementById('site-q').getAttribute('aria-expanded') === 'true'",
    );
    let open = browser.script(state);
    assert_eq!(open["shown"], true);
    assert_eq!(
        open["active"],
        Value::Null,
        "no option is active before an arrow key"
    );
    assert!(open["options"].as_u64().unwrap() >= 2, "{open}");
    // The arrow keys move the active option; the focus stays in the box.
    browser.press(ARROW_DOWN);
    let first = browser.script(state);
    assert_eq!(first["selected"], "true");
    assert_eq!(first["focus"], "site-q");
    let first_id = first["active"].as_str().unwrap().to_string();
    browser.press(ARROW_DOWN);
    assert_ne!(browser.script(state)["active"], json!(first_id));
    browser.press(ARROW_UP);
    assert_eq!(browser.script(state)["active"], json!(first_id));
    // The last option is every result, on /search/.
    browser.press(ARROW_UP);
    browser.press(ARROW_UP);
    let last = browser.script(state);
    assert_eq!(
        browser.script(&format!(
            "const o = document.getElementById('{}'); return o && o.classList.contains('search-all')",
            last["active"].as_str().unwrap_or("")
        )),
        true,
        "ArrowUp from no option goes to the last: {last}"
    );
    // Escape closes the list.
    browser.press(ESCAPE);
    let escaped = browser.script(state);
    assert_eq!(
        (
            escaped["expanded"].clone(),
            escaped["shown"].clone(),
            escaped["active"].clone()
        ),
        (json!("false"), json!(false), Value::Null)
    );
    // An arrow key opens it again; Enter on the active option opens its page.
    browser.press(ARROW_DOWN);
    browser.wait_for(
        "the list to open again",
        "return document.getElementById('site-q').getAttribute('aria-expanded') === 'true'",
    );
    browser.press(ARROW_DOWN);
    assert_eq!(browser.script(state)["active"], json!(first_id));
    browser.screenshot("search-combobox");
    browser.press(ENTER);
    browser.wait_for(
        "the first result's page",
        "return location.pathname === '/erp/odoo/'",
    );
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}

#[test]
#[ignore = "needs Chromium and chromedriver"]
fn tab_reaches_the_map_switch_before_its_countries_and_a_focused_country_is_drawn_on_top() {
    require_browser();
    let served = serve();
    let browser = Browser::start();
    for (width, height) in WIDTHS {
        browser.resize(width, height);
        browser.goto(&url(&served, "/"));
        browser.wait_for("the page", "return document.readyState === 'complete'");
        // Tab from the top of the page until a country of the map has the focus.
        let mut switch_at = None;
        let mut country_at = None;
        for stop in 1..=200 {
            browser.press(TAB);
            let at = browser.script(
                "const e = document.activeElement; return e.matches('input[name=map-toggle]') ? 'switch' : e.closest('svg.fig-map') ? 'map' : ''",
            );
            if at == "switch" && switch_at.is_none() {
                switch_at = Some(stop);
            }
            if at == "map" {
                country_at = Some(stop);
                break;
            }
        }
        let (Some(switch_at), Some(country_at)) = (switch_at, country_at) else {
            panic!(
                "{width} px: Tab never reached the map's switch ({switch_at:?}) or a country ({country_at:?})"
            )
        };
        println!(
            "{width} px: the map's switch is Tab stop {switch_at}, its first country {country_at}"
        );
        assert!(switch_at < country_at);
        if width < 600 {
            // On a phone the switch is drawn above the map, as it comes first.
            let order = browser.script(
                "return document.querySelector('.map-switch').getBoundingClientRect().bottom <= document.querySelector('svg.fig-map').getBoundingClientRect().top",
            );
            assert_eq!(order, true, "{width} px: the switch is drawn above the map");
        }
        // The focused country's ring is drawn last in its panel (over every neighbour), on its outline.
        let ring = browser.script(
            "const a = document.activeElement; const r = document.querySelector('svg.fig-map .focus-ring'); \
             if (!r) return null; \
             const d = [...a.querySelectorAll('.shape')].map(s => s.getAttribute('d')); \
             return {last: r.parentNode.lastElementChild === r, same_panel: r.parentNode === a.parentNode, \
                     outline: [...r.querySelectorAll('.ring')].some(p => d.includes(p.getAttribute('d'))), \
                     hidden: r.getAttribute('aria-hidden'), pointer: getComputedStyle(r).pointerEvents}",
        );
        assert_eq!(
            ring,
            json!({"last": true, "same_panel": true, "outline": true, "hidden": "true", "pointer": "none"}),
            "{width} px: the focused country's ring"
        );
        // France, among its neighbours, for the screenshot.
        browser.script(
            "const a = document.querySelector('svg.fig-map a[href=\"/fr/\"]'); a.scrollIntoView({block: 'center'}); return null",
        );
        for _ in 0..100 {
            if browser.script("return document.activeElement.getAttribute('href')") == "/fr/" {
                break;
            }
            browser.press(TAB);
        }
        assert_eq!(
            browser.script("return document.activeElement.getAttribute('href')"),
            "/fr/",
            "Tab reaches France on the map"
        );
        browser.screenshot(&format!("home-map-focus-{width}"));
        // Moving on takes the ring away with the focus.
        browser.script("document.activeElement.blur(); return null");
        assert_eq!(
            browser.script("return document.querySelector('svg.fig-map .focus-ring') === null"),
            true
        );
    }
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}

#[test]
#[ignore = "needs Chromium and chromedriver"]
fn every_matrix_cell_tab_reaches_is_wholly_in_view_clear_of_the_sticky_headings() {
    require_browser();
    let served = serve();
    let browser = Browser::start();
    // Where the focused cell is, against what of the grid is in view: the grid's box less its scroll
    // bars, below the sticky heading row and right of the sticky country column, inside the window.
    let seen = "const td = document.activeElement.closest('table.matrix td'); if (!td) return null; \
                const w = td.closest('.grid-wrap'); const g = w.getBoundingClientRect(); \
                const c = td.getBoundingClientRect(); \
                const head = td.closest('table').tHead.getBoundingClientRect(); \
                const side = td.parentElement.querySelector('th').getBoundingClientRect(); \
                const top = Math.max(g.top + w.clientTop, head.bottom, 0), left = Math.max(g.left + w.clientLeft, side.right, 0); \
                const bottom = Math.min(g.top + w.clientTop + w.clientHeight, innerHeight), right = Math.min(g.left + w.clientLeft + w.clientWidth, innerWidth); \
                return {id: td.id, ok: c.top >= top - 0.5 && c.left >= left - 0.5 && c.bottom <= bottom + 0.5 && c.right <= right + 0.5, \
                        cell: [c.left, c.top, c.right, c.bottom].map(Math.round), view: [left, top, right, bottom].map(Math.round)}";
    for (width, height) in WIDTHS {
        browser.resize(width, height);
        browser.goto(&url(&served, "/e-invoicing/"));
        browser.wait_for(
            "the filters",
            "return !document.getElementById('matrix-filters').hidden",
        );
        let links = browser
            .script("return document.querySelectorAll('table.matrix td a').length")
            .as_u64()
            .unwrap();
        assert!(links > 100, "{links} cell links");
        // From the first country's link, Tab through every row.
        browser.script("document.querySelector('table.matrix tbody th a').focus(); return null");
        let mut cells = 0;
        let mut cut = Vec::new();
        loop {
            browser.press(TAB);
            if browser.script("return !!document.activeElement.closest('table.matrix')") != true {
                break;
            }
            let at = browser.script(seen);
            if at.is_null() {
                continue;
            }
            cells += 1;
            if at["ok"] != true {
                cut.push(at.to_string());
            }
            if at["id"] == "be-microsoft-dynamics-365-finance" {
                browser.screenshot(&format!("matrix-focus-{width}"));
            }
        }
        assert_eq!(cells, links, "{width} px: Tab reached every cell link");
        assert!(
            cut.is_empty(),
            "{width} px: {} of {cells} focused cells are not wholly in view:\n{}",
            cut.len(),
            cut.join("\n")
        );
    }
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}

/// The search ranks by relevance: results whose title (a name) holds the words come before results that
/// only mention them in their text. "control" is in two facts' titles and in the API page's text only
/// (its try-it control): ranked by kind first, the page came first.
#[test]
#[ignore = "needs Chromium and chromedriver"]
fn search_ranks_a_title_match_before_a_mention_and_highlights_the_words_found() {
    require_browser();
    let served = serve();
    let browser = Browser::start();
    browser.goto(&url(&served, "/calendar/"));
    browser.wait_for("the page", "return document.readyState === 'complete'");
    browser.click("#site-q");
    browser.type_into("#site-q", "control");
    browser.wait_for(
        "the results under the box",
        "const p = document.querySelector('.search-popup'); return !!p && !p.hidden && p.querySelectorAll('a.result').length > 0",
    );
    let titles = browser.script(
        "return [...document.querySelectorAll('.search-popup a.result .result-title')].map(t => t.textContent)",
    );
    let titles: Vec<&str> = titles
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let named: Vec<bool> = titles
        .iter()
        .map(|t| t.to_lowercase().contains("control"))
        .collect();
    assert!(
        named.contains(&true) && named.contains(&false),
        "both kinds of result are needed: {titles:?}"
    );
    let first_mention = named.iter().position(|n| !n).unwrap();
    assert!(
        named[first_mention..].iter().all(|n| !n),
        "a title match ranks after a mention: {titles:?}"
    );
    // The words found are highlighted, in the titles and in the texts, and only they.
    let marks = browser.script(
        "return [...document.querySelectorAll('.search-popup a.result mark')].map(m => m.textContent.toLowerCase())",
    );
    let marks = marks.as_array().unwrap();
    assert!(marks.len() >= titles.len(), "{marks:?}");
    assert!(marks.iter().all(|m| m == "control"), "{marks:?}");
    assert_eq!(
        browser.script(
            "return document.querySelectorAll('.search-popup a.result .result-title mark').length"
        ),
        json!(named.iter().filter(|n| **n).count())
    );
    // A name match first: the product itself for its name, its name highlighted.
    browser.script("const i = document.getElementById('site-q'); i.value = ''; return null");
    browser.type_into("#site-q", "odoo");
    browser.wait_for(
        "Odoo first",
        "const a = document.querySelector('.search-popup a.result .result-title'); return !!a && a.textContent === 'Odoo'",
    );
    assert_eq!(
        browser.script(
            "return document.querySelector('.search-popup a.result .result-title').innerHTML"
        ),
        "<mark>Odoo</mark>"
    );
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}

/// The search folds case, accents and punctuation alike in the index and in the query: each query finds
/// a result where the text is written otherwise, and highlights it as written (the marks are where the
/// folded query matched the folded text, so a mark of "VERI*FACTU" for "verifactu" shows both folded).
#[test]
#[ignore = "needs Chromium and chromedriver"]
fn search_folds_case_accents_and_punctuation_in_the_index_and_the_query() {
    require_browser();
    let served = serve();
    let browser = Browser::start();
    // (query, as a matching title or text writes it)
    let cases = [
        ("verifactu", "VERI*FACTU"),
        ("Veri-Factu", "VERI*FACTU"),
        ("s4hana", "S/4HANA"),
        ("TURKIYE", "Türkiye"),
        ("turkiye", "Türkiye"),
    ];
    let index =
        String::from_utf8(crate::common::http::get(&served.address, "/search-index.json").body)
            .unwrap();
    for (query, written) in cases {
        assert!(
            index.contains(written),
            "the index no longer holds {written:?}"
        );
        browser.goto(&url(&served, &format!("/search/?q={query}")));
        browser.wait_for("the results", "return !!document.getElementById('results')");
        let marks = browser.script(
            "return [...document.querySelectorAll('#search-page-results mark')].map(m => m.textContent)",
        );
        assert!(
            marks.as_array().unwrap().iter().any(|m| m == written),
            "{query:?} finds and highlights no {written:?}: {marks}"
        );
    }
    // A country found by an e-invoicing format of the regimes table: the first word of a format's label
    // that one country's regimes name, and the result opens that country's row.
    let regimes: serde_json::Value = serde_json::from_slice(
        &crate::common::http::get(&served.address, "/api/v1/regimes.json").body,
    )
    .unwrap();
    let mut by_format: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
    for r in regimes["data"].as_array().unwrap() {
        for f in r["formats"].as_array().into_iter().flatten() {
            by_format
                .entry(f["label"].as_str().unwrap().to_string())
                .or_default()
                .insert((
                    r["country"].as_str().unwrap().to_string(),
                    r["id"].as_str().unwrap().to_string(),
                ));
        }
    }
    let (label, rows) = by_format
        .iter()
        .find(|(_, rows)| rows.iter().map(|r| &r.0).collect::<BTreeSet<_>>().len() == 1)
        .expect("a format named by one country");
    let word = label.split_whitespace().next().unwrap();
    browser.goto(&url(&served, &format!("/search/?q={word}")));
    browser.wait_for("the results", "return !!document.getElementById('results')");
    let links = browser.script(
        "return [...document.querySelectorAll('#search-page-results a.result')].map(a => new URL(a.href).pathname + new URL(a.href).hash)",
    );
    for (country, id) in rows {
        assert!(
            links
                .as_array()
                .unwrap()
                .iter()
                .any(|l| *l == format!("/{country}/#regime-{id}")),
            "{word:?} ({label}) finds no /{country}/#regime-{id}: {links}"
        );
    }
    // The VERI*FACTU page: Spain's e-invoicing fact, found by the word as people type it.
    browser.goto(&url(&served, "/search/?q=verifactu"));
    browser.wait_for("the results", "return !!document.getElementById('results')");
    let links = browser.script(
        "return [...document.querySelectorAll('#search-page-results a.result')].map(a => new URL(a.href).pathname + new URL(a.href).hash)",
    );
    assert!(
        links
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l == "/es/#es-e-invoicing"),
        "{links}"
    );
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}

/// At a phone's width the header's Countries panel lists every country in one column that scrolls down:
/// none is left in a column beside the others that only scrolls sideways.
#[test]
#[ignore = "needs Chromium and chromedriver"]
fn the_countries_menu_on_a_phone_lists_every_country_in_one_column() {
    require_browser();
    let served = serve();
    let countries: Value = serde_json::from_slice(
        &crate::common::http::get(&served.address, "/api/v1/countries.json").body,
    )
    .unwrap();
    let count = countries["data"].as_array().unwrap().len();
    let browser = Browser::start();
    browser.resize(390, 844);
    browser.goto(&url(&served, "/"));
    browser.wait_for("the page", "return document.readyState === 'complete'");
    browser.click("details.jump summary");
    let layout = browser.script(
        "const u = document.querySelector('details.jump ul'); const box = u.getBoundingClientRect(); const items = [...u.querySelectorAll('li')]; \
         return {count: items.length, innerWidth, sideways: u.scrollWidth - u.clientWidth, \
                 lefts: [...new Set(items.map(l => Math.round(l.getBoundingClientRect().left)))].length, \
                 outside: items.filter(l => { const r = l.getBoundingClientRect(); return r.left < box.left || r.right > box.right; }).map(l => l.textContent), \
                 scrolls: u.scrollHeight > u.clientHeight && getComputedStyle(u).overflowY === 'auto'}",
    );
    assert_eq!(layout["innerWidth"], 390, "{layout}");
    assert_eq!(layout["count"], json!(count), "{layout}");
    assert_eq!(layout["sideways"], 0, "{layout}");
    assert_eq!(layout["lefts"], 1, "one column: {layout}");
    assert_eq!(layout["outside"], json!([]), "{layout}");
    assert_eq!(layout["scrolls"], true, "{layout}");
    // The last country is reached by scrolling the panel down.
    let last = browser.script(
        "const u = document.querySelector('details.jump ul'); u.scrollTop = u.scrollHeight; const b = u.getBoundingClientRect(), r = u.querySelector('li:last-child').getBoundingClientRect(); return r.top >= b.top && r.bottom <= b.bottom + 1",
    );
    assert_eq!(last, true);
}

/// At a phone's width every answer shows its grade beside it: in a table whose grade is a column of its
/// own (support by ERP or by country, flags, local ERPs) the row is stacked, the grade right after the
/// answer; no grade is left where only a sideways scroll shows it.
#[test]
#[ignore = "needs Chromium and chromedriver"]
fn on_a_phone_every_answer_shows_its_grade_beside_it() {
    require_browser();
    let served = serve();
    let browser = Browser::start();
    browser.resize(390, 844);
    for page in ["/es/", "/de/", "/erp/odoo/", "/local-erps/", "/calendar/"] {
        browser.goto(&url(&served, page));
        browser.wait_for("the page", "return document.readyState === 'complete'");
        let found = browser.script(
            "const grades = [...document.querySelectorAll('main td.verified, main td.unverified, main .answer .grade')]; \
             const hidden = grades.filter(g => { const r = g.getBoundingClientRect(); return r.width === 0 || r.left < 0 || r.right > document.documentElement.clientWidth; }).map(g => g.closest('tr').textContent.slice(0, 60)); \
             const apart = [...document.querySelectorAll('main tr')].filter(tr => tr.querySelector('td.ans') && tr.querySelector('td.verified, td.unverified')).filter(tr => { \
               const a = tr.querySelector('td.ans').getBoundingClientRect(), g = tr.querySelector('td.verified, td.unverified').getBoundingClientRect(); \
               const besideIt = Math.abs(g.top - a.top) < 4 && g.left >= a.right - 1; const underIt = g.top >= a.bottom - 1 && g.top - a.bottom < 8 && g.left <= a.left + 1; \
               return !(besideIt || underIt); }).map(tr => tr.textContent.slice(0, 60)); \
             return {grades: grades.length, hidden, apart, wide: document.documentElement.scrollWidth - document.documentElement.clientWidth}",
        );
        assert!(found["grades"].as_u64().unwrap() > 0, "{page}: {found}");
        assert_eq!(
            found["hidden"],
            json!([]),
            "{page}: grades out of view: {found}"
        );
        assert_eq!(
            found["apart"],
            json!([]),
            "{page}: grades apart from their answers: {found}"
        );
        assert_eq!(found["wide"], 0, "{page}: {found}");
    }
}

/// The try-it controls of /api/ look like the site's other controls (the search box's button): the same
/// face, size, border and corners, not the browser's default widgets.
#[test]
#[ignore = "needs Chromium and chromedriver"]
fn the_try_it_controls_are_styled_like_the_rest_of_the_site() {
    require_browser();
    let served = serve();
    let browser = Browser::start();
    browser.goto(&url(&served, "/api/"));
    browser.wait_for("the page", "return document.readyState === 'complete'");
    let styles = browser.script(
        "const pick = s => { const c = getComputedStyle(document.querySelector(s)); return [c.fontFamily, c.fontSize, c.borderTopWidth, c.borderTopLeftRadius, c.paddingTop]; }; \
         return {site: pick('.site-search button'), select: pick('#try-endpoint'), send: pick('#try-send'), copy: pick('#try-copy'), body: getComputedStyle(document.body).fontFamily}",
    );
    assert_eq!(styles["site"][0], styles["body"], "{styles}");
    for control in ["select", "send", "copy"] {
        assert_eq!(styles[control], styles["site"], "{control}: {styles}");
    }
}

/// The follow section of `/changes/`: a reader ticks two countries and gets a subscription list (OPML)
/// naming exactly their feeds; each feed it names is served, is Atom a feed parser reads, and holds only
/// that country's changes. (The site is static: a feed of an arbitrary set of countries cannot exist for
/// every set, so the list of per-country feeds stands for it.)
#[test]
#[ignore = "needs Chromium and chromedriver"]
fn the_follow_section_builds_a_subscription_to_the_chosen_countries() {
    require_browser();
    let served = serve();
    let browser = Browser::start();
    for (width, height) in WIDTHS {
        browser.resize(width, height);
        browser.goto(&url(&served, "/changes/#follow"));
        browser.wait_for(
            "the follow boxes",
            "return document.querySelector('#follow-form.scripted') !== null",
        );
        // The same address at the next width keeps the page (and its ticks): start from none ticked.
        browser.script(
            "document.querySelectorAll('#follow-form input:checked').forEach(b => b.click())",
        );
        browser.click("#follow-form input[value=no]");
        browser.click("#follow-form input[value=de]");
        browser.wait_for(
            "the subscription list",
            "return !document.getElementById('follow-result').hidden && document.getElementById('follow-count').textContent === '2'",
        );
        browser.script("document.getElementById('follow-result').scrollIntoView()");
        browser.screenshot(&format!("changes-follow-{width}"));
        let outlines = browser.script(
            "const href = document.getElementById('follow-opml').href;
             const xml = decodeURIComponent(href.slice(href.indexOf(',') + 1));
             const doc = new DOMParser().parseFromString(xml, 'application/xml');
             if (doc.querySelector('parsererror')) return 'not XML: ' + xml;
             return [...doc.querySelectorAll('body > outline')].map(o => [o.getAttribute('text'), o.getAttribute('xmlUrl')]);",
        );
        let outlines = outlines
            .as_array()
            .unwrap_or_else(|| panic!("{outlines}"))
            .clone();
        let base = url(&served, "");
        let mut chosen: Vec<(String, String)> = Vec::new();
        for outline in &outlines {
            let feed_url = outline[1].as_str().unwrap();
            let path = feed_url
                .strip_prefix(&base)
                .unwrap_or_else(|| panic!("{feed_url} is on the site"));
            let reply = crate::common::http::send(&served.address, "GET", path, None);
            assert_eq!(reply.status, 200, "{path}");
            let feed = feed_rs::parser::parse(reply.body.as_slice())
                .unwrap_or_else(|e| panic!("{path} is a feed: {e}"));
            assert_eq!(feed.feed_type, feed_rs::model::FeedType::Atom);
            let title = feed.title.unwrap().content;
            let name = title
                .strip_prefix("Localization Reference Data Service: ")
                .and_then(|t| t.strip_suffix(": changes"))
                .unwrap()
                .to_string();
            assert_eq!(outline[0], format!("{name}: changes"));
            assert!(!feed.entries.is_empty(), "{path}");
            for entry in &feed.entries {
                let body = entry.content.as_ref().unwrap().body.clone().unwrap();
                for item in body.split("<li>").skip(1) {
                    assert!(
                        item.starts_with(&format!("{name}: ")),
                        "{path} holds only {name}'s changes: {item}"
                    );
                }
            }
            chosen.push((path.to_string(), name));
        }
        chosen.sort();
        assert_eq!(
            chosen,
            [
                ("/de/changes.xml".to_string(), "Germany".to_string()),
                ("/no/changes.xml".to_string(), "Norway".to_string()),
            ]
        );
        // The chosen calendars are listed too.
        let links = browser.script(
            "return [...document.querySelectorAll('#follow-links a')].map(a => a.getAttribute('href'))",
        );
        let links: BTreeSet<String> = links
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().strip_prefix(&base).unwrap().to_string())
            .collect();
        assert_eq!(
            links,
            BTreeSet::from(
                [
                    "/de/calendar.ics",
                    "/de/changes.xml",
                    "/no/calendar.ics",
                    "/no/changes.xml"
                ]
                .map(String::from)
            )
        );
        // The page itself never scrolls sideways (the list's columns wrap).
        assert_eq!(
            browser.script("return document.documentElement.scrollWidth <= innerWidth"),
            true,
            "too wide: {}",
            browser.script(WIDER_THAN_THE_WINDOW)
        );
        let errors = browser.console_errors();
        assert!(errors.is_empty(), "console errors: {errors:#?}");
    }
}

/// The readiness board at desktop and phone widths: no sideways scroll of the page, each phase a card on
/// a phone whose cells say what they are, no console error; and it needs no script (it loads none).
#[test]
#[ignore = "needs Chromium and chromedriver"]
fn the_readiness_board_reads_at_desktop_and_phone_widths_without_scripts() {
    require_browser();
    let served = serve();
    let html =
        String::from_utf8(crate::common::http::get(&served.address, "/readiness/").body).unwrap();
    // Only the search box's script, which every page has (and the dev server's live reload): the board
    // itself needs none.
    let scripts: Vec<&str> = html
        .match_indices("<script src=\"")
        .map(|(i, _)| &html[i..i + html[i..].find('>').unwrap()])
        .filter(|tag| !tag.contains("/__livereload"))
        .collect();
    // Without scripts the whole board is the page; its one script only adds the ERP and country filters.
    assert_eq!(
        scripts,
        [
            "<script src=\"/assets/search.js\" defer",
            "<script src=\"/assets/readiness.js\" defer"
        ],
        "{scripts:?}"
    );
    assert!(html.contains("<form class=\"filters\" id=\"board-filters\" hidden>"));
    let browser = Browser::start();
    // The board filtered to one ERP, to one country, and the ERP consultant's question: is Odoo ready
    // for Belgium's and Poland's mandates? The address keeps the choice; only the chosen countries'
    // phases are shown, each with the chosen ERP's answer alone.
    for (name, erp, countries) in [
        ("odoo", "odoo", &[][..]),
        ("belgium", "", &["be"][..]),
        ("odoo-belgium-poland", "odoo", &["be", "pl"][..]),
    ] {
        let mut query = Vec::new();
        if !erp.is_empty() {
            query.push(format!("erp={erp}"));
        }
        if !countries.is_empty() {
            query.push(format!("country={}", countries.join(",")));
        }
        let page = format!("/readiness/?{}", query.join("&"));
        for width in [1280, 390] {
            browser.resize(width, 900);
            browser.goto(&url(&served, &page));
            browser.wait_for(
                &page,
                "return document.readyState === 'complete' && !document.getElementById('board-filters').hidden",
            );
            let shown = browser.script(
                "const rows = [...document.querySelectorAll('table.board tbody tr')].filter(r => r.checkVisibility()); \
                 const last = rows[rows.length - 1]; \
                 return [rows.map(r => r.dataset.country), \
                 [...document.querySelectorAll('li[data-erp]')].filter(li => li.checkVisibility()).map(li => li.dataset.erp), \
                 location.search, \
                 last ? Math.round(last.getBoundingClientRect().bottom) : 0, innerHeight]",
            );
            let rows: Vec<&str> = shown[0]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap())
                .collect();
            assert!(!rows.is_empty(), "{page}: {shown}");
            if countries.is_empty() {
                assert_eq!(
                    rows.len(),
                    html.matches("<tr id=\"").count(),
                    "{page}: every phase"
                );
            } else {
                assert!(
                    rows.iter().all(|c| countries.contains(c)),
                    "{page}: {shown}"
                );
                // Each chosen country has a phase on the board.
                assert!(
                    countries.iter().all(|c| rows.contains(c)),
                    "{page}: {shown}"
                );
            }
            let erps = shown[1].as_array().unwrap();
            if !erp.is_empty() {
                assert!(
                    !erps.is_empty() && erps.iter().all(|e| e == erp),
                    "{page}: {shown}"
                );
            }
            browser.screenshot(&format!("readiness-{name}-{width}"));
            // The address keeps the choice, as the reader wrote it.
            assert_eq!(shown[2], format!("?{}", query.join("&")));
            if name == "odoo-belgium-poland" && width == 1280 {
                // The answer on one screen: the last of Belgium's and Poland's phases ends above the
                // bottom of a 1280 × 900 window.
                assert!(
                    shown[3].as_i64().unwrap() <= shown[4].as_i64().unwrap(),
                    "{page}: the last phase ends at {} px, below the window",
                    shown[3]
                );
            }
        }
    }
    for (width, page) in [
        (1280, "/readiness/"),
        (390, "/readiness/"),
        (1280, "/erp/odoo/#upcoming"),
        (390, "/erp/odoo/#upcoming"),
    ] {
        browser.resize(width, 900);
        browser.goto(&url(&served, page));
        browser.wait_for(page, "return document.readyState === 'complete'");
        browser.screenshot(&format!(
            "readiness-{}-{width}",
            if page.starts_with("/erp") {
                "erp"
            } else {
                "board"
            }
        ));
        assert_eq!(
            browser.script("return document.documentElement.scrollWidth <= innerWidth"),
            true,
            "{page} scrolls sideways at {width} px; too wide: {}",
            browser.script(WIDER_THAN_THE_WINDOW)
        );
        let rows =
            browser.script("return document.querySelectorAll('table.board tbody tr').length");
        assert!(rows.as_u64().unwrap() > 0, "{page}");
        if width == 390 {
            // A card: the row as wide as the phone allows, each cell a line named by its column.
            let widths = browser.script(
                "const r = e => Math.round(e.getBoundingClientRect().width); \
                 const row = document.querySelector('table.board tbody tr'); \
                 return [r(row), r(row.querySelector('td.group')), getComputedStyle(row.querySelector('td.group'), '::before').content]",
            );
            let (card, cell) = (widths[0].as_i64().unwrap(), widths[1].as_i64().unwrap());
            assert!(
                card >= 330 && cell >= card - 40,
                "card {card} px, cell {cell} px"
            );
            assert!(widths[2].as_str().unwrap().ends_with(": \""), "{widths}");
        }
    }
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}

#[test]
#[ignore = "needs Chromium and chromedriver"]
fn the_compare_page_shows_the_chosen_countries_side_by_side_and_keeps_them_in_the_address() {
    require_browser();
    let served = serve();
    // Three countries of the register (its first, middle and last) and a code it does not have.
    let codes = register_codes(served.project.path());
    let (a, b, c) = (&codes[0], &codes[codes.len() / 2], &codes[codes.len() - 1]);
    let unknown = ('a'..='z')
        .rev()
        .map(|l| format!("z{l}"))
        .find(|code| !codes.contains(code))
        .expect("a code the register lacks");
    // The columns shown, in order: the countries of the first side-by-side table's first row.
    let shown = "return [...document.querySelector('#side table.side tbody tr').querySelectorAll('td')].filter(c => c.offsetParent !== null).map(c => c.dataset.c)";
    // Each chosen country's column is fetched (`/compare/{code}.json`): the view says which it shows
    // once they are drawn.
    let drawn = |codes: &[&String]| {
        let codes: Vec<&str> = codes.iter().map(|c| c.as_str()).collect();
        format!(
            "return document.getElementById('side').dataset.shown === '{}' && !document.getElementById('side').hasAttribute('aria-busy')",
            codes.join(",")
        )
    };
    let browser = Browser::start();
    for (width, height) in WIDTHS {
        browser.resize(width, height);
        browser.goto(&url(&served, &format!("/compare/?c={a},{b},{unknown}")));
        browser.wait_for(
            "the choice of countries",
            "return !document.getElementById('compare-form').hidden",
        );
        browser.wait_for("the columns of the address", &drawn(&[a, b]));
        assert_eq!(browser.script(shown), json!([a, b]));
        // Every side-by-side table: a heading and a cell per chosen country, in the order of the address.
        let headings = browser.script(
            "return [...document.querySelectorAll('#side table.side')].map(t => [...t.querySelectorAll('thead th[data-c]')].filter(h => !h.hidden).map(h => h.dataset.c))",
        );
        for table in headings.as_array().unwrap() {
            assert_eq!(table, &json!([a, b]));
        }
        let status = browser.script("return document.getElementById('compare-status').textContent");
        assert!(
            status.as_str().unwrap().contains(&unknown),
            "the left-out code is said: {status}"
        );
        browser.screenshot(&format!("compare-{a}-{b}-{width}"));
        // Choosing a third country shows it and puts it in the address; leaving the first out too.
        if browser.script("return document.getElementById('compare-choose').open") != json!(true) {
            browser.click("#compare-choose summary");
        }
        browser.click(&format!("#compare-form input[value={c}]"));
        browser.wait_for("the third column", &drawn(&[a, b, c]));
        assert_eq!(browser.script(shown), json!([a, b, c]));
        assert_eq!(
            browser.script("return location.search"),
            json!(format!("?c={a},{b},{c}"))
        );
        browser.click(&format!("#compare-form input[value={a}]"));
        browser.wait_for("the first column left out", &drawn(&[b, c]));
        assert_eq!(browser.script(shown), json!([b, c]));
        assert_eq!(
            browser.script("return location.search"),
            json!(format!("?c={b},{c}"))
        );
        // The page never scrolls sideways: on a phone each row is a card, each answer named by its
        // country.
        assert_eq!(
            browser.script("return document.documentElement.scrollWidth <= innerWidth"),
            true,
            "too wide at {width} px: {}",
            browser.script(WIDER_THAN_THE_WINDOW)
        );
        let errors = browser.console_errors();
        assert!(errors.is_empty(), "console errors: {errors:#?}");
    }
}

#[test]
#[ignore = "needs Chromium and chromedriver"]
fn the_date_control_of_compare_shows_what_the_phases_say_on_the_chosen_day() {
    require_browser();
    let served = serve();
    let project = served.project.path();
    let rows = crate::on_date::phases(project);
    let reference = crate::on_date::reference_date(project);
    let codes = ["pl", "be", "es"];
    let get = |path: &str| -> Value {
        serde_json::from_str(&crate::common::http::get(&served.address, path).text()).unwrap()
    };
    // The toggles of a day as the site publishes them: the latest listed day on or before it.
    let index = get("/api/v1/on/index.json");
    let toggles_on = |day: &str| -> BTreeMap<String, Value> {
        let entry = index["data"]
            .as_array()
            .unwrap()
            .iter()
            .rfind(|e| e["date"].as_str().unwrap() <= day)
            .unwrap();
        let on = get(&format!(
            "/api/v1/on/{}.json",
            entry["date"].as_str().unwrap()
        ));
        on["data"]["countries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["code"].as_str().unwrap().to_string(),
                    c["toggles"].clone(),
                )
            })
            .collect()
    };
    // What the table shows: per row, its country, each toggle in words and each phase's state.
    let shown = "return [...document.querySelectorAll('#on-result tbody tr')].map(r => [r.dataset.c, Object.fromEntries([...r.querySelectorAll('td[data-toggle]')].map(td => [td.dataset.toggle, td.textContent])), Object.fromEntries([...r.querySelectorAll('li[data-phase]')].map(li => [li.dataset.phase, li.dataset.state]))])";
    let drawn = |day: &str| {
        format!(
            "return !!document.querySelector('#on-result table[data-day=\"{day}\"]') && !document.getElementById('on-result').hasAttribute('aria-busy')"
        )
    };
    let check = |browser: &Browser, day: &str| {
        let date: jiff::civil::Date = day.parse().unwrap();
        let toggles = toggles_on(day);
        let table = browser.script(shown);
        let table = table.as_array().unwrap();
        assert_eq!(
            table.iter().map(|r| r[0].clone()).collect::<Vec<_>>(),
            codes.map(|c| json!(c)).to_vec(),
            "the countries of the address, in its order"
        );
        for row in table {
            let code = row[0].as_str().unwrap();
            for (name, value) in toggles[code].as_object().unwrap() {
                let word = match value.as_bool() {
                    Some(true) => "yes",
                    Some(false) => "no",
                    None => "unknown",
                };
                assert_eq!(row[1][name], json!(word), "{code} {name} on {day}");
            }
            let phases: BTreeMap<String, Value> = rows
                .iter()
                .filter(|p| p.country == code)
                .map(|p| (p.id.clone(), json!(crate::on_date::expected_state(p, date))))
                .collect();
            assert_eq!(
                row[2]
                    .as_object()
                    .unwrap()
                    .clone()
                    .into_iter()
                    .collect::<BTreeMap<_, _>>(),
                phases,
                "{code}: each phase on {day} as its row of obligations.csv says"
            );
        }
    };
    let browser = Browser::start();
    for (width, height) in WIDTHS {
        browser.resize(width, height);
        browser.goto(&url(&served, "/compare/?c=pl,be,es&on=2027-01-01"));
        browser.wait_for(
            "the date control",
            "return !document.getElementById('on-form').hidden",
        );
        browser.wait_for("the answers of 2027-01-01", &drawn("2027-01-01"));
        assert_eq!(
            browser.script("return document.getElementById('on-day').value"),
            json!("2027-01-01")
        );
        check(&browser, "2027-01-01");
        browser.screenshot(&format!("compare-on-2027-01-01-{width}"));
        // Another day, chosen in the control: the address keeps it beside the countries.
        browser.script(
            "const i = document.getElementById('on-day'); i.value = '2027-07-01'; i.dispatchEvent(new Event('change', {bubbles: true})); return null",
        );
        browser.wait_for("the answers of 2027-07-01", &drawn("2027-07-01"));
        check(&browser, "2027-07-01");
        assert_eq!(
            browser.script("return location.search"),
            json!("?c=pl,be,es&on=2027-07-01")
        );
        // Back to the reference date: the published toggles, and the day leaves the address.
        browser.click("#on-reset");
        browser.wait_for(
            "the answers of the reference date",
            &drawn(&reference.to_string()),
        );
        check(&browser, &reference.to_string());
        assert_eq!(
            browser.script("return location.search"),
            json!("?c=pl,be,es")
        );
        assert_eq!(
            browser.script("return document.documentElement.scrollWidth <= innerWidth"),
            true,
            "too wide at {width} px: {}",
            browser.script(WIDER_THAN_THE_WINDOW)
        );
        let errors = browser.console_errors();
        assert!(errors.is_empty(), "console errors: {errors:#?}");
    }
}

#[test]
#[ignore = "needs Chromium and chromedriver"]
fn the_date_control_of_home_shows_the_map_and_the_table_as_the_api_says_on_the_chosen_day() {
    require_browser();
    let served = serve();
    let get = |path: &str| -> Value {
        serde_json::from_str(&crate::common::http::get(&served.address, path).text()).unwrap()
    };
    let day = "2027-01-01";
    let reference = crate::on_date::reference_date(served.project.path()).to_string();
    let toggles_of = |answer: &Value| -> BTreeMap<String, Value> {
        answer["data"]["countries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["code"].as_str().unwrap().to_string(),
                    c["toggles"].clone(),
                )
            })
            .collect()
    };
    let on = toggles_of(&get(&format!("/api/v1/on/{day}.json")));
    let then = toggles_of(&get(&format!("/api/v1/on/{reference}.json")));
    // The day must differ from the reference date somewhere, or the test could not fail.
    let changed: Vec<&String> = on.keys().filter(|c| on[*c] != then[*c]).collect();
    assert!(!changed.is_empty(), "nothing changes by {day}");
    let word = |v: &Value| match v.as_bool() {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    };
    // What the page shows: each table row's cells by toggle (the first word of each), and each map
    // country's value of each toggle, read from its classes (tN-true, tN-false, tN-unknown).
    let shown = "const names = [...document.querySelectorAll('table.toggles-table thead th')].map(th => th.dataset.toggle); \
        const table = Object.fromEntries([...document.querySelectorAll('table.toggles-table tbody tr')].map(tr => [tr.dataset.c, Object.fromEntries([...tr.cells].map((td, i) => [names[i], td.textContent.split(/[: (]/)[0]]).filter(e => e[0]))])); \
        const toggles = Object.fromEntries([...document.querySelectorAll('input[name=map-toggle][id^=map-t]')].map(i => [i.id.slice(5), i.value])); \
        const map = {}; document.querySelectorAll('svg.fig-map a.country').forEach(a => { const code = a.getAttribute('href').split('/')[1]; map[code] = Object.fromEntries(Object.entries(toggles).map(([n, name]) => [name, ['true', 'false', 'unknown'].find(v => a.classList.contains('t' + n + '-' + v))])); }); \
        return {table, map}";
    let check = |browser: &Browser, expected: &BTreeMap<String, Value>, when: &str| {
        let page = browser.script(shown);
        for (code, toggles) in expected {
            for (name, value) in toggles.as_object().unwrap() {
                assert_eq!(
                    page["table"][code][name],
                    json!(word(value)),
                    "table: {code} {name} on {when}"
                );
                let class = match value.as_bool() {
                    Some(b) => b.to_string(),
                    None => "unknown".to_string(),
                };
                assert_eq!(
                    page["map"][code][name],
                    json!(class),
                    "map: {code} {name} on {when}"
                );
            }
        }
    };
    let built = |browser: &Browser| {
        browser.script("return [document.querySelector('table.toggles-table tbody').innerHTML, document.querySelector('svg.fig-map').outerHTML.replace(/ class=\"focus-ring\"[^]*?<\\/g>/, '')]")
    };
    let browser = Browser::start();
    // Each wait is for the status the page writes once it has painted the day's answers ("… show what
    // applies on DAY."), not for "Loading what applies on DAY…", which it writes before the fetch: on a
    // loaded machine the table was read between the two.
    for (width, height) in WIDTHS {
        browser.resize(width, height);
        browser.goto(&url(&served, "/"));
        browser.wait_for("the date control", "return !document.getElementById('on-form').hidden && /show what applies on /.test(document.getElementById('on-status').textContent)");
        let as_built = built(&browser);
        check(&browser, &then, &reference);
        browser.goto(&url(&served, &format!("/?on={day}")));
        browser.wait_for(
            "the answers of the day",
            &format!(
                "return /show what applies on {day}/.test(document.getElementById('on-status').textContent)"
            ),
        );
        assert_eq!(
            browser.script("return document.getElementById('on-day').value"),
            json!(day)
        );
        check(&browser, &on, day);
        assert_eq!(
            browser.script("return !document.getElementById('on-table-status').hidden"),
            true,
            "the table says which day it shows"
        );
        browser.script("document.getElementById('map').scrollIntoView(); return null");
        browser.screenshot(&format!("home-on-{day}-{width}"));
        // The map's colouring is kept beside the day in the address.
        browser.click("label[for='map-t1']");
        assert_eq!(
            browser.script("return location.search"),
            browser.script(&format!(
                "return '?on={day}&map=' + document.getElementById('map-t1').value"
            ))
        );
        // Back to the reference date: the page as it was built, and the day leaves the address.
        browser.click("#on-reset");
        browser.wait_for(
            "the reference date",
            &format!("return /show what applies on {reference}/.test(document.getElementById('on-status').textContent)"),
        );
        assert_eq!(built(&browser), as_built, "the page as built at {width} px");
        assert_eq!(
            browser.script("return location.search"),
            browser.script("return '?map=' + document.getElementById('map-t1').value")
        );
        assert_eq!(
            browser.script("return document.documentElement.scrollWidth <= innerWidth"),
            true,
            "too wide at {width} px: {}",
            browser.script(WIDER_THAN_THE_WINDOW)
        );
        let errors = browser.console_errors();
        assert!(errors.is_empty(), "console errors: {errors:#?}");
    }
}

/// The compare page's chooser and the follow list of `/changes/` narrow as the reader types (a country's
/// name, its code, an alias of the register), and each country is one Tab stop: Tab from the filter box
/// goes through the countries left in the list, one stop each, then out of it. At 1280 and 390 px, with
/// axe's WCAG 2.1 A and AA rules on each filtered list.
#[test]
#[ignore = "needs Chromium and chromedriver"]
fn the_compare_and_follow_choosers_filter_as_the_reader_types_with_one_tab_stop_a_country() {
    require_browser();
    let served = serve();
    let axe = axe_source();
    let project = served.project.path();
    let countries = crate::common::register_csv_rows(project, "sources/registers/countries.csv");
    let aliases =
        crate::common::register_csv_rows(project, "sources/registers/country_aliases.csv");
    let fold = |s: &str| s.to_lowercase();
    // The countries a typed word leaves, by the register: its name holds the word, or its code or an
    // alias starts with it.
    let left = |typed: &str| -> BTreeSet<String> {
        countries
            .iter()
            .filter(|c| {
                fold(&c["name"]).contains(typed)
                    || fold(&c["code"]).starts_with(typed)
                    || aliases
                        .iter()
                        .any(|a| a["code"] == c["code"] && fold(&a["alias"]).starts_with(typed))
            })
            .map(|c| c["code"].clone())
            .collect()
    };
    let poland = countries
        .iter()
        .find(|c| c["name"] == "Poland")
        .expect("Poland is in the register")["code"]
        .clone();
    let browser = Browser::start();
    // (page, what makes it ready, the filter box, the list, how to open the list)
    let choosers = [
        (
            "/compare/",
            "return !document.getElementById('compare-form').hidden",
            "#compare-filter",
            "#compare-countries",
            Some("#compare-choose summary"),
        ),
        (
            "/changes/#follow",
            "return document.querySelector('#follow-form.scripted') !== null",
            "#follow-filter",
            "#follow-countries",
            None,
        ),
    ];
    for (width, height) in WIDTHS {
        browser.resize(width, height);
        for (page, ready, filter, list, opener) in choosers {
            browser.goto(&url(&served, page));
            browser.wait_for(page, ready);
            if let Some(opener) = opener
                && browser.script("return document.getElementById('compare-choose').open")
                    != json!(true)
            {
                browser.click(opener);
            }
            let shown = format!(
                "return [...document.querySelectorAll('{list} > li')].filter(li => li.offsetParent !== null).map(li => li.querySelector('input').value)"
            );
            let all = browser.script(&shown);
            assert_eq!(
                all.as_array().unwrap().len(),
                countries.len(),
                "{page}: every country at first"
            );
            // Tab from the filter box: the stops inside the list, until the focus leaves it.
            let tab_stops = || -> usize {
                browser.script(&format!(
                    "document.querySelector('{filter}').focus(); return null"
                ));
                let mut stops = 0;
                loop {
                    browser.press(TAB);
                    let inside = browser.script(&format!(
                        "return document.querySelector('{list}').contains(document.activeElement)"
                    ));
                    if inside != json!(true) {
                        return stops;
                    }
                    stops += 1;
                    assert!(
                        stops <= 3 * countries.len(),
                        "{page}: Tab never leaves the list"
                    );
                }
            };
            assert_eq!(
                tab_stops(),
                countries.len(),
                "{page}: one Tab stop a country"
            );
            for typed in ["pol", "holland", "uk", "CZ"] {
                browser.script(&format!(
                    "const i = document.querySelector('{filter}'); i.value = ''; i.dispatchEvent(new Event('input')); return null"
                ));
                browser.type_into(filter, typed);
                let expected = left(&fold(typed));
                assert!(
                    !expected.is_empty(),
                    "{typed:?} leaves a country of the register"
                );
                let got: BTreeSet<String> = browser
                    .script(&shown)
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap().to_string())
                    .collect();
                assert_eq!(got, expected, "{page}: {typed:?} at {width} px");
                if typed == "pol" {
                    assert!(got.contains(&poland), "{page}: \"pol\" leaves Poland");
                    assert_eq!(
                        tab_stops(),
                        got.len(),
                        "{page}: the Tab stops of the filtered list"
                    );
                    browser.screenshot(&format!(
                        "filter-{}-{width}",
                        page.trim_matches(|c| c == '/' || c == '#')
                            .replace(['/', '#'], "-")
                    ));
                    let violations = browser.axe(&axe, &format!("{page} filtered at {width} px"));
                    assert!(violations.is_empty(), "{}", violations.join("\n"));
                }
            }
            // The box says how many are left, and an empty box lists every country again.
            let count = browser.script(&format!(
                "return document.getElementById(document.querySelector('{filter}').getAttribute('aria-describedby')).textContent"
            ));
            assert!(
                count
                    .as_str()
                    .unwrap()
                    .ends_with(&format!(" of {} countries", countries.len())),
                "{count}"
            );
            browser.script(&format!(
                "const i = document.querySelector('{filter}'); i.value = ''; i.dispatchEvent(new Event('input')); return null"
            ));
            assert_eq!(browser.script(&shown), all, "{page}: every country again");
        }
    }
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}

/// Without JavaScript (Chromium's content setting, so no page script runs) the home page, a country page
/// and the comparison page read as built: no date control (the forms scripts show stay hidden), the next
/// changes as a table, the comparison's note in its `<noscript>`, no sideways scroll; screenshots at 1280
/// and 390 px for review.
#[test]
#[ignore = "needs Chromium and chromedriver"]
fn without_scripts_home_a_country_and_compare_show_the_reference_date_and_the_next_changes() {
    require_browser();
    let served = serve();
    let browser = Browser::start_without_scripts();
    for (width, height) in WIDTHS {
        browser.resize(width, height);
        for (page, name) in [
            ("/", "home"),
            ("/pl/", "country-pl"),
            ("/compare/?c=pl,be,es", "compare"),
        ] {
            browser.goto(&url(&served, page));
            browser.wait_for(page, "return document.readyState === 'complete'");
            // No page script ran: the search box's script gives it its combobox role.
            assert_eq!(
                browser.script("return document.getElementById('site-q').getAttribute('role')"),
                Value::Null,
                "{page}: a script ran"
            );
            assert_eq!(
                browser.script("const f = document.getElementById('on-form'); return !!f && f.offsetParent === null"),
                true,
                "{page}: the date control is for scripts only"
            );
            if page != "/" {
                assert_eq!(
                    browser.script("const t = document.querySelector('[aria-labelledby=next-changes] table'); return !!t && t.offsetParent !== null && t.tBodies[0].rows.length > 0"),
                    true,
                    "{page}: the next changes, as a table"
                );
            }
            if name == "compare" {
                assert_eq!(
                    browser.script("const n = document.querySelector('.compare-noscript'); return !!n && n.offsetParent !== null"),
                    true,
                    "{page}: the note for readers without scripts"
                );
            }
            assert_eq!(
                browser.script("return document.documentElement.scrollWidth <= innerWidth"),
                true,
                "{page} too wide at {width} px: {}",
                browser.script(WIDER_THAN_THE_WINDOW)
            );
            browser.screenshot(&format!("noscript-{name}-{width}"));
            // The part a script would change: the date section (the next changes), or the home table.
            browser.script(
                "const at = document.getElementById('next-changes') || document.getElementById('countries'); at.scrollIntoView(); return null",
            );
            browser.screenshot(&format!("noscript-{name}-{width}-dates"));
        }
    }
}

/// The header's sections on a phone: the search box inside the header at every width; at 390 and 320 px
/// the sections take two rows at most, the sections that do not fit under "More" (a details panel, so
/// it opens without scripts), and every section of the desktop header is reachable there; "More" opens, Escape closes it with the focus back on it, axe finds no
/// violation with it open. At 1280 px every section is in the row and "More" is not shown.
#[test]
#[ignore = "needs Chromium and chromedriver"]
fn the_phone_header_is_two_rows_with_the_other_sections_under_more() {
    require_browser();
    let served = serve();
    let axe = axe_source();
    let browser = Browser::start();
    // The sections the header links (both its row and its "More"), by address.
    let sections = "return [...new Set([...document.querySelectorAll('.site-header nav > a, .site-header nav .nav-more a')].map(a => a.getAttribute('href')))].sort()";
    // What the reader can reach now: the links shown in the row, and those of a shown "More".
    let reachable = "const more = document.querySelector('.nav-more'); const shown = [...document.querySelectorAll('.site-header nav > a')].filter(a => a.offsetParent !== null).map(a => a.getAttribute('href')); \
        const under = more.offsetParent !== null ? [...more.querySelectorAll('a')].map(a => a.getAttribute('href')) : []; return [...new Set(shown.concat(under))].sort()";
    let rows = "return new Set([...document.querySelector('.site-header nav').children].filter(e => e.offsetParent !== null).map(e => Math.round(e.getBoundingClientRect().top))).size";
    for (width, height) in [(1280, 900), (390, 844), (320, 700)] {
        browser.resize(width, height);
        browser.goto(&url(&served, "/calendar/"));
        browser.wait_for("the page", "return document.readyState === 'complete'");
        let all = browser.script(sections);
        assert!(all.as_array().unwrap().len() > 8, "{all}");
        assert_eq!(
            browser.script(reachable),
            all,
            "{width} px: every section reachable"
        );
        // The search box's button stays inside the header, whether the window draws its scrollbar beside
        // the page (a desktop browser made narrow, as here) or over it (a phone).
        assert_eq!(
            browser.script("return document.querySelector('.site-search button').getBoundingClientRect().right <= document.querySelector('.site-header').getBoundingClientRect().right + 0.5"),
            true,
            "{width} px: the Search button sticks out of the header"
        );
        let rows = browser.script(rows).as_u64().unwrap();
        let more_shown =
            browser.script("return document.querySelector('.nav-more').offsetParent !== null");
        if width >= 1280 {
            assert_eq!(rows, 1, "{width} px: one row");
            assert_eq!(more_shown, false);
            continue;
        }
        assert!(rows <= 2, "{width} px: {rows} rows of sections");
        assert_eq!(more_shown, true, "{width} px: More is shown");
        browser.screenshot(&format!("header-{width}"));
        browser.click(".nav-more > summary");
        browser.screenshot(&format!("header-more-open-{width}"));
        let violations = browser.axe(&axe, &format!("/calendar/ with More open at {width} px"));
        assert!(violations.is_empty(), "{}", violations.join("\n"));
        browser.script("document.querySelector('.nav-more > summary').focus()");
        browser.press(TAB);
        assert_eq!(
            browser.script("return document.querySelector('.nav-more').contains(document.activeElement) && document.activeElement.tagName === 'A'"),
            true,
            "{width} px: Tab goes into More"
        );
        browser.press(ESCAPE);
        assert_eq!(
            browser.script("const p = document.querySelector('.nav-more'); return !p.open && document.activeElement === p.querySelector('summary')"),
            true,
            "{width} px: Escape closes More and focuses its summary"
        );
        assert_eq!(
            browser.script("return document.documentElement.scrollWidth <= innerWidth"),
            true,
            "too wide at {width} px: {}",
            browser.script(WIDER_THAN_THE_WINDOW)
        );
    }
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}

/// The edits (insertions, deletions, substitutions) from one word to another.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (previous + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(here + 1);
            previous = here;
        }
    }
    row[b.len()]
}

/// The search forgives: a misspelt country or term, another name of a country (an alias of
/// `sources/registers/country_aliases.csv`), a country's code, and a topic with a country each find their
/// page first under the box. Each expected page is derived from the registers: the country nearest to a
/// misspelling, the country an alias names, the country a query names among its words; a misspelt term
/// finds first an item holding the word of the index nearest to it. A phrase the data holds ("reverse
/// charge") finds it, and a query that finds nothing offers the nearest words.
#[test]
#[ignore = "needs Chromium and chromedriver"]
fn search_forgives_typos_and_finds_countries_by_their_other_names_and_codes_first() {
    require_browser();
    let served = serve();
    let project = served.project.path();
    let countries = crate::common::register_csv_rows(project, "sources/registers/countries.csv");
    let aliases =
        crate::common::register_csv_rows(project, "sources/registers/country_aliases.csv");
    let fold = |s: &str| s.to_lowercase();
    let page_of_code = |code: &str| format!("/{code}/");
    // The country whose name is nearest to a misspelt query.
    let nearest_country = |query: &str| {
        let row = countries
            .iter()
            .min_by_key(|c| edit_distance(&fold(query), &fold(&c["name"])))
            .unwrap();
        page_of_code(&row["code"])
    };
    // The country an alias names.
    let aliased = |alias: &str| {
        let row = aliases
            .iter()
            .find(|a| fold(&a["alias"]) == fold(alias))
            .unwrap_or_else(|| panic!("{alias:?} is not an alias of the register"));
        page_of_code(&row["code"])
    };
    // The country a query names among its words.
    let named = |query: &str| {
        let words: Vec<String> = query.split_whitespace().map(fold).collect();
        let row = countries
            .iter()
            .find(|c| words.contains(&fold(&c["name"])))
            .unwrap_or_else(|| panic!("{query:?} names no country"));
        page_of_code(&row["code"])
    };
    // The code of the country of the topic query, in lower and upper case.
    let topic = "e-invoicing poland";
    let code = named(topic).trim_matches('/').to_string();
    let cases: Vec<(String, String)> = vec![
        ("Hungray".into(), nearest_country("Hungray")),
        ("turkey".into(), aliased("turkey")),
        ("Czech Republic".into(), aliased("Czech Republic")),
        ("Holland".into(), aliased("Holland")),
        ("UK".into(), aliased("UK")),
        ("USA".into(), aliased("USA")),
        (topic.into(), named(topic)),
        (code.clone(), page_of_code(&code)),
        (code.to_uppercase(), page_of_code(&code)),
    ];
    let browser = Browser::start();
    browser.goto(&url(&served, "/calendar/"));
    browser.wait_for("the page", "return document.readyState === 'complete'");
    browser.click("#site-q");
    let first = "const a = document.querySelector('.search-popup a.result'); return a ? new URL(a.href).pathname + new URL(a.href).hash : null";
    for (query, page) in &cases {
        browser.script("const i = document.getElementById('site-q'); i.value = ''; return null");
        browser.type_into("#site-q", query);
        let deadline = Instant::now() + Duration::from_secs(20);
        while browser.script(first) != json!(page) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        let shown = browser.script(
            "return [...document.querySelectorAll('.search-popup a.result')].map(a => new URL(a.href).pathname + new URL(a.href).hash)",
        );
        assert_eq!(
            browser.script(first),
            json!(page),
            "{query:?} finds {page} first: {shown}"
        );
    }
    // "peppl": the index's nearest word, and an item holding it first.
    let index: Value = serde_json::from_slice(
        &crate::common::http::get(&served.address, "/search-index.json").body,
    )
    .unwrap();
    let items = index["items"].as_array().unwrap();
    let words: BTreeSet<String> = items
        .iter()
        .flat_map(|i| {
            format!("{} {}", i["t"].as_str().unwrap(), i["s"].as_str().unwrap())
                .split(|c: char| !c.is_alphanumeric())
                .map(fold)
                .collect::<Vec<_>>()
        })
        .filter(|w| !w.is_empty())
        .collect();
    let typo = "peppl";
    let meant = words
        .iter()
        .min_by_key(|w| edit_distance(typo, w))
        .unwrap()
        .clone();
    assert!(edit_distance(typo, &meant) <= 2, "{meant}");
    browser.script("const i = document.getElementById('site-q'); i.value = ''; return null");
    browser.type_into("#site-q", typo);
    browser.wait_for(
        "the results of the misspelt word under the box",
        &format!("const p = document.querySelector('.search-popup'); const all = p && p.querySelector('a.search-all'); \
                  return !!all && !p.hidden && new URL(all.href).searchParams.get('q') === '{typo}' && p.querySelectorAll('a.result').length > 0"),
    );
    let text = browser
        .script("return document.querySelector('.search-popup a.result').textContent")
        .as_str()
        .unwrap()
        .to_lowercase();
    assert!(text.contains(&meant), "{typo:?} first finds {text:?}");
    // The box's results for an alias, at a desktop's and a phone's width.
    for (width, height) in WIDTHS {
        browser.resize(width, height);
        browser.script("const i = document.getElementById('site-q'); i.value = ''; return null");
        browser.click("#site-q");
        browser.type_into("#site-q", "UK");
        browser.wait_for(
            "the results for UK under the box",
            "const p = document.querySelector('.search-popup'); const all = p && p.querySelector('a.search-all'); \
             return !!all && !p.hidden && new URL(all.href).searchParams.get('q') === 'UK' && p.querySelectorAll('a.result').length > 0",
        );
        browser.screenshot(&format!("search-forgiving-box-{width}"));
    }
    browser.resize(WIDTHS[0].0, WIDTHS[0].1);
    // A phrase of the data is found where the data says it; every item holding both words is listed.
    let holding: Vec<String> = items
        .iter()
        .filter(|i| {
            let text = fold(i["s"].as_str().unwrap());
            text.contains("reverse") && text.contains("charge")
        })
        .map(|i| format!("/{}", i["u"].as_str().unwrap()))
        .collect();
    browser.goto(&url(&served, "/search/?q=reverse+charge"));
    browser.wait_for("the results", "return !!document.getElementById('results')");
    let links = browser.script(
        "return [...document.querySelectorAll('#search-page-results a.result')].map(a => new URL(a.href).pathname + new URL(a.href).hash)",
    );
    if holding.is_empty() {
        assert_eq!(links, json!([]));
    } else {
        for url in &holding {
            assert!(
                links.as_array().unwrap().contains(&json!(url)),
                "{url} is not found by \"reverse charge\": {links}"
            );
        }
    }
    for (width, height) in WIDTHS {
        browser.resize(width, height);
        browser.screenshot(&format!("search-forgiving-page-{width}"));
    }
    // A word of many items ("peppol") lists them by relevance, not by name: the item that says it most
    // often comes before every item that says it once, and the list is not in A–Z order.
    let word = "peppol";
    let said = |i: &Value| {
        fold(&format!(
            "{} {}",
            i["t"].as_str().unwrap(),
            i["s"].as_str().unwrap()
        ))
        .matches(word)
        .count()
    };
    let saying: Vec<&Value> = items.iter().filter(|i| said(i) > 0).collect();
    let most = saying.iter().max_by_key(|i| said(i)).unwrap();
    let most_url = format!("/{}", most["u"].as_str().unwrap());
    let once: BTreeSet<String> = saying
        .iter()
        .filter(|i| said(i) == 1)
        .map(|i| format!("/{}", i["u"].as_str().unwrap()))
        .collect();
    assert!(
        said(most) > 1 && !once.is_empty(),
        "{word}: {} items",
        saying.len()
    );
    browser.goto(&url(&served, &format!("/search/?q={word}")));
    browser.wait_for("the results", "return !!document.getElementById('results')");
    let listed = browser.script(
        "return [...document.querySelectorAll('#search-page-results a.result')].map(a => [new URL(a.href).pathname + new URL(a.href).hash, a.textContent])",
    );
    let listed = listed.as_array().unwrap();
    let at = |url: &str| listed.iter().position(|l| l[0] == json!(url));
    let first_once = listed
        .iter()
        .position(|l| once.contains(l[0].as_str().unwrap()))
        .expect("an item saying it once is listed");
    assert!(
        at(&most_url).is_some_and(|p| p < first_once),
        "{word}: {most_url} ({} times) is listed at {:?}, an item saying it once at {first_once}: {listed:?}",
        said(most),
        at(&most_url)
    );
    let titles: Vec<String> = listed
        .iter()
        .map(|l| l[1].as_str().unwrap().to_string())
        .collect();
    let mut sorted = titles.clone();
    sorted.sort();
    assert_ne!(titles, sorted, "{word}: listed in A–Z order");
    browser.resize(WIDTHS[0].0, WIDTHS[0].1);
    // A misspelling near a word of the index, of a word found nowhere else: nothing found, then the
    // nearest words, each a link to its own results.
    let near = "reverce chargeback";
    browser.goto(&url(
        &served,
        &format!("/search/?q={}", near.replace(' ', "+")),
    ));
    browser.wait_for("the results", "return !!document.getElementById('results')");
    let heading = browser.script("return document.getElementById('results').textContent");
    let suggested = browser.script(
        "return [...document.querySelectorAll('#search-page-results .search-suggestions a')].map(a => [a.textContent, new URL(a.href).search])",
    );
    if heading.as_str().unwrap().starts_with("Nothing found") {
        assert!(
            !suggested.as_array().unwrap().is_empty(),
            "nothing found for {near:?}, and no word offered"
        );
        // The box offers the same words as options of its list, which the keys reach.
        browser.click("#site-q");
        browser.type_into("#site-q", near);
        browser.wait_for(
            "the nearest words under the box",
            "return document.querySelectorAll('.search-popup a.search-suggestion[role=option]').length > 0",
        );
        browser.press(ARROW_DOWN);
        assert_eq!(
            browser.script(
                "const a = document.getElementById(document.getElementById('site-q').getAttribute('aria-activedescendant')); return !!a && a.classList.contains('search-suggestion')"
            ),
            true
        );
        for (width, height) in WIDTHS {
            browser.resize(width, height);
            browser.screenshot(&format!("search-forgiving-nearest-{width}"));
        }
        browser.resize(WIDTHS[0].0, WIDTHS[0].1);
    }
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}

/// On a phone (390 px) every table wider than the window scrolls inside its box with its first column in
/// view: scrolled to its far right, each row's first cell still starts at the box's left edge. Checked on
/// one page of each kind (the tables drawn as cards on a phone do not scroll, so they are not counted).
/// At 320 px no page scrolls sideways.
#[test]
#[ignore = "needs Chromium and chromedriver"]
fn on_a_phone_every_wide_table_keeps_its_first_column_in_view_and_no_page_scrolls_sideways() {
    require_browser();
    let served = serve();
    let mut pages = one_page_per_kind(served.project.path());
    // The topic pages with the widest tables, whatever page stands for their kind.
    for topic in ["/e-invoicing/", "/vat-reporting/", "/saf-t/", "/data/"] {
        if !pages.iter().any(|p| p == topic) {
            pages.push(topic.to_string());
        }
    }
    let browser = Browser::start();
    browser.resize(390, 844);
    let mut scrolled = 0;
    let mut failing = Vec::new();
    for page in &pages {
        browser.goto(&url(&served, page));
        browser.wait_for(
            page,
            "return document.readyState === 'complete' && !document.querySelector('[aria-busy=true]')",
        );
        let found = browser.script(
            "const out = {scrolled: 0, loose: []}; \
             for (const wrap of document.querySelectorAll('main .table-wrap, main .grid-wrap')) { \
               const table = wrap.querySelector(':scope > table'); \
               if (!table || getComputedStyle(table).display !== 'table' || wrap.scrollWidth <= wrap.clientWidth + 1) continue; \
               out.scrolled++; wrap.scrollLeft = wrap.scrollWidth; \
               const edge = wrap.getBoundingClientRect().left + wrap.clientLeft; \
               for (const tr of table.rows) { \
                 const first = tr.cells[0]; if (!first) continue; \
                 const r = first.getBoundingClientRect(); \
                 if (r.width > 0 && Math.abs(r.left - edge) > 1.5) { out.loose.push((table.id || table.className || 'table') + ': ' + tr.textContent.trim().slice(0, 40) + ' at ' + Math.round(r.left - edge)); break; } \
               } \
               wrap.scrollLeft = 0; \
             } \
             return out;",
        );
        scrolled += found["scrolled"].as_u64().unwrap();
        for loose in found["loose"].as_array().unwrap() {
            failing.push(format!("{page}: {loose}"));
        }
    }
    println!(
        "{scrolled} tables scroll sideways at 390 px on {} pages",
        pages.len()
    );
    assert!(
        scrolled > 0,
        "no table scrolls sideways at 390 px: the check saw nothing"
    );
    assert!(
        failing.is_empty(),
        "first columns that scroll out of view at 390 px:\n{}",
        failing.join("\n")
    );

    browser.resize(320, 700);
    let mut wide = Vec::new();
    for page in &pages {
        browser.goto(&url(&served, page));
        browser.wait_for(
            page,
            "return document.readyState === 'complete' && !document.querySelector('[aria-busy=true]')",
        );
        // Against the window's width: a phone's scrollbar is drawn over the page, not beside it.
        let sideways =
            browser.script("return Math.max(0, document.documentElement.scrollWidth - innerWidth)");
        if sideways != json!(0) {
            wide.push(format!("{page}: {}", browser.script(WIDER_THAN_THE_WINDOW)));
        }
    }
    assert!(
        wide.is_empty(),
        "pages that scroll sideways at 320 px:\n{}",
        wide.join("\n")
    );
}

/// Escape closes the header's Countries panel and the compare page's chooser with the focus back on the
/// summary that opened it, not dropped to the page's `<body>`; at 1280 and 390 px.
#[test]
#[ignore = "needs Chromium and chromedriver"]
fn escape_closes_a_panel_and_returns_the_focus_to_its_opener() {
    require_browser();
    let served = serve();
    let browser = Browser::start();
    for (width, height) in WIDTHS {
        browser.resize(width, height);
        for (page, panel) in [
            ("/calendar/", "details.jump"),
            ("/compare/", "details#compare-choose"),
        ] {
            browser.goto(&url(&served, page));
            browser.wait_for(
                page,
                &format!("return document.readyState === 'complete' && !!document.querySelector('{panel}') && document.querySelector('{panel}').offsetParent !== null"),
            );
            // Opened by its summary (the compare page may open its chooser itself), then Tab into it.
            if browser.script(&format!("return document.querySelector('{panel}').open"))
                != json!(true)
            {
                browser.click(&format!("{panel} > summary"));
            }
            browser.script(&format!(
                "document.querySelector('{panel} > summary').focus()"
            ));
            browser.press(TAB);
            let inside = browser.script(&format!(
                "const p = document.querySelector('{panel}'); return p.open && p.contains(document.activeElement) && document.activeElement.tagName !== 'SUMMARY'"
            ));
            assert_eq!(
                inside, true,
                "{width} px {page}: Tab goes into the open {panel}"
            );
            browser.press(ESCAPE);
            let after = browser.script(&format!(
                "const p = document.querySelector('{panel}'); return {{open: p.open, focus: document.activeElement === p.querySelector('summary'), on: document.activeElement.tagName}}"
            ));
            assert_eq!(
                after,
                json!({"open": false, "focus": true, "on": "SUMMARY"}),
                "{width} px {page}: Escape closes {panel} and focuses its summary"
            );
        }
    }
}
