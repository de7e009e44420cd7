#!/usr/bin/env python3
"""Time to the first search result on a slow profile, and the search index's weight.

Serves a built site (`locref build --out DIR`) the way a static host does (each file gzipped when the
browser accepts it, with the site's Content-Security-Policy), opens /calendar/ in headless Chromium
through chromedriver, and throttles it with the DevTools protocol as DevTools' "mid-tier mobile" does:
the "Fast 3G" network (562.5 ms latency, 180,000 B/s down, 84,375 B/s up; `--profile slow3g`: DevTools'
"Slow 3G", 2,000 ms and 50,000 B/s each way) and a 4x CPU slowdown, with the browser's cache off. Each run loads the page, then focuses the search box (which starts loading the
index, as a reader's click does) and types the query at once; the time is from the typing to the first
result drawn under the box. Prints the index's bytes (raw and gzipped), each run's time, and the median.

    python3 bench/search_latency.py --site public [--runs 5] [--query poland]

Standard library only; needs `chromium` and `chromedriver` (Debian's `chromium`, `chromium-driver`).
"""

import argparse
import gzip
import http.server
import json
import os
import socket
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.request

CSP = "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".json": "application/json", ".svg": "image/svg+xml"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(site):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            path = self.path.split("?")[0]
            file = os.path.join(site, path.lstrip("/"))
            if path.endswith("/"):
                file = os.path.join(file, "index.html")
            if not os.path.isfile(file):
                self.send_error(404)
                return
            body = open(file, "rb").read()
            self.send_response(200)
            self.send_header("Content-Type", TYPES.get(os.path.splitext(file)[1], "application/octet-stream"))
            self.send_header("Content-Security-Policy", CSP)
            self.send_header("Cache-Control", "no-store")
            if "gzip" in self.headers.get("Accept-Encoding", ""):
                body = gzip.compress(body, 6)
                self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Browser:
    def __init__(self):
        self.port = free_port()
        self.driver = subprocess.Popen(["chromedriver", f"--port={self.port}"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                self.call("GET", "/status")
                break
            except OSError:
                time.sleep(0.1)
        self.profile = tempfile.TemporaryDirectory()
        caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
            "binary": "/usr/bin/chromium",
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,900", f"--user-data-dir={self.profile.name}"]}}}}
        self.session = self.call("POST", "/session", caps)["value"]["sessionId"]

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.loads(response.read())

    def command(self, method, path, body=None):
        return self.call(method, f"/session/{self.session}{path}", body)["value"]

    def cdp(self, cmd, params):
        return self.command("POST", "/goog/cdp/execute", {"cmd": cmd, "params": params})

    def script(self, code):
        return self.command("POST", "/execute/sync", {"script": code, "args": []})

    def script_async(self, code):
        return self.command("POST", "/execute/async", {"script": code, "args": []})

    def close(self):
        try:
            self.call("DELETE", f"/session/{self.session}")
        finally:
            self.driver.terminate()
            self.driver.wait()


# DevTools' network presets (its own figures: latency in ms, throughput in bytes a second).
PROFILES = {
    "fast3g": {"latency": 562.5, "downloadThroughput": 180000, "uploadThroughput": 84375},
    "slow3g": {"latency": 2000, "downloadThroughput": 50000, "uploadThroughput": 50000},
}


def throttle(browser, profile):
    browser.cdp("Network.enable", {})
    browser.cdp("Network.setCacheDisabled", {"cacheDisabled": True})
    browser.cdp("Network.emulateNetworkConditions", {"offline": False, **PROFILES[profile]})
    browser.cdp("Emulation.setCPUThrottlingRate", {"rate": 4})


# Focus the box, type the query, and report the time from the typing to the first result drawn.
FIRST_RESULT = """
const done = arguments[arguments.length - 1];
const query = %s;
const input = document.getElementById('site-q');
input.focus();
input.dispatchEvent(new FocusEvent('focus'));
const t0 = performance.now();
input.value = query;
input.dispatchEvent(new Event('input', {bubbles: true}));
const check = () => {
  const first = document.querySelector('.search-popup a.result');
  if (first) { done({ms: performance.now() - t0, first: first.querySelector('.result-title').textContent}); }
  else if (performance.now() - t0 > 60000) { done({ms: null}); }
  else { requestAnimationFrame(check); }
};
check();
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", required=True, help="a folder `locref build` wrote")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--query", default="poland")
    parser.add_argument("--profile", choices=sorted(PROFILES), default="fast3g")
    args = parser.parse_args()
    index = open(os.path.join(args.site, "search-index.json"), "rb").read()
    print(f"index: {len(index)} bytes, {len(gzip.compress(index, 6))} gzipped (level 6)")
    library = os.path.join(args.site, "assets", "minisearch.js")
    if os.path.exists(library):
        lib = open(library, "rb").read()
        print(f"library: {len(lib)} bytes, {len(gzip.compress(lib, 6))} gzipped (level 6)")
    server = serve(args.site)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    times = []
    for run in range(args.runs):
        browser = Browser()
        try:
            throttle(browser, args.profile)
            browser.command("POST", "/url", {"url": base + "/calendar/"})
            while browser.script("return document.readyState") != "complete":
                time.sleep(0.1)
            result = browser.script_async(FIRST_RESULT % json.dumps(args.query))
            if result["ms"] is None:
                print(f"run {run + 1}: no result within 60 s")
                continue
            print(f"run {run + 1}: {result['ms']:.0f} ms to the first result ({result.get('first')})")
            times.append(result["ms"])
        finally:
            browser.close()
    if times:
        print(f"median: {statistics.median(times):.0f} ms over {len(times)} runs")
    server.shutdown()


if __name__ == "__main__":
    main()
