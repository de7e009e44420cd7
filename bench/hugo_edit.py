#!/usr/bin/env python3
"""Incremental-rebuild latency of `hugo server` after editing ONE country data file: Hugo's side of
bench/watch_edit.py.

Python 3 standard library only.

    python3 bench/hugo_edit.py --site /tmp/locref-bench/hugo-x1 --mode disk-full --runs 7 --json out.json

Modes (flags added to `hugo server --bind 127.0.0.1 --port P --disableLiveReload --debug`):
  disk-full : --renderToDisk --disableFastRender   (poll the written file on disk)
  mem-full  : --disableFastRender                  (render to memory; poll over HTTP)
  mem-fast  : (Hugo's default: render to memory + "fast render mode"; poll over HTTP)

Per run:
  * edit data/countries/<cc>.json (append a unique marker to facts[0].value), written to a
    temp file and atomically renamed into place; t0 = just before the rename
  * visible_ms : t0 -> the rendered /<cc>/index.html contains the marker (disk: stat+read
                 every 1 ms; memory: HTTP GET every 5 ms)
  * log_ms     : t0 -> Hugo prints "Total in N ms" for that rebuild (stdout line arrival)
  * hugo_ms    : the N Hugo reports itself (excludes fsnotify batching delay)
  * pages      : number of "Render page ... to ..." debug lines in that rebuild
                 (one per output file: HTML, MD, JSON)
  * files_rewritten (disk mode): files whose mtime changed in the destination dir
The original data file is restored at the end and the server is stopped by its PID.
"""
import argparse
import tempfile
import json
import os
import queue
import random
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pair import machine_busy, own_cpu  # noqa: E402
from watch_edit import proc_cpu  # noqa: E402

MODES = {
    "disk-full": ["--renderToDisk", "--disableFastRender"],
    "mem-full": ["--disableFastRender"],
    "mem-fast": [],
}
TOTAL_RE = re.compile(r"^Total in (\d+) ms")
BUILT_RE = re.compile(r"^Built in (\d+) ms")


class Server:
    def __init__(self, site, mode, port, dest, logpath):
        self.cmd = ["hugo", "server", "--bind", "127.0.0.1", "--port", str(port),
                    "--disableLiveReload", "--debug", "-d", dest] + MODES[mode]
        self.log = open(logpath, "w")
        self.q = queue.Queue()
        self.times = []  # arrival times of lines consumed by wait_for (parallel to its list)
        self.proc = subprocess.Popen(self.cmd, cwd=site, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, bufsize=1)
        self.t = threading.Thread(target=self._reader, daemon=True)
        self.t.start()

    def _reader(self):
        for line in self.proc.stdout:
            now = time.monotonic()
            self.log.write("%.6f %s" % (now, line))
            self.q.put((now, line.rstrip("\n")))
        self.q.put((time.monotonic(), None))

    def next_line(self, timeout):
        try:
            return self.q.get(timeout=timeout)
        except queue.Empty:
            return None

    def wait_for(self, regex, timeout):
        """Consume lines until one matches; return (t, match, consumed_lines)."""
        deadline = time.monotonic() + timeout
        consumed = []
        self.times = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("timeout waiting for %r; last lines: %r" % (regex.pattern, consumed[-5:]))
            item = self.next_line(left)
            if item is None:
                continue
            t, line = item
            if line is None:
                raise RuntimeError("hugo server exited (rc=%s); last lines: %r" % (self.proc.poll(), consumed[-10:]))
            consumed.append(line)
            self.times.append(t)
            m = regex.search(line)
            if m:
                return t, m, consumed

    def drain_quiet(self, quiet_s):
        """Consume lines until nothing arrives for quiet_s; return the lines."""
        lines = []
        while True:
            item = self.next_line(quiet_s)
            if item is None:
                return lines
            if item[1] is None:
                raise RuntimeError("hugo server exited")
            lines.append(item[1])

    def peak_rss_kb(self):
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
        except OSError:
            return None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()  # SIGTERM to this PID only
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.t.join(timeout=5)
        self.log.close()


def wait_quiet_server(server_pid, threshold=0.08, need=2, max_wait=1800):
    """Like pair.wait_quiet, but the (idle) hugo server's own CPU does not count."""
    t0 = time.monotonic()
    ok = 0
    while time.monotonic() - t0 < max_wait:
        b0, s0, h0 = machine_busy(), own_cpu(), proc_cpu(server_pid) or 0
        time.sleep(1.0)
        b1, s1, h1 = machine_busy(), own_cpu(), proc_cpu(server_pid) or 0
        load = max(0.0, (b1 - b0) - (s1 - s0) - (h1 - h0))
        ok = ok + 1 if load < threshold else 0
        if ok >= need:
            break
    return time.monotonic() - t0


def snapshot(dest):
    snap = {}
    for root, _dirs, files in os.walk(dest):
        for fn in files:
            p = os.path.join(root, fn)
            try:
                snap[p] = os.stat(p).st_mtime_ns
            except FileNotFoundError:
                pass
    return snap


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", required=True)
    ap.add_argument("--mode", choices=sorted(MODES), default="disk-full")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--country", default="de")
    ap.add_argument("--port", type=int, default=1414)
    ap.add_argument("--dest", default=None, help="render dir for --renderToDisk (default $BENCH_DIR/srv-<site>)")
    ap.add_argument("--quiet-s", type=float, default=None, help="idle time that ends a rebuild (default scales with build time)")
    ap.add_argument("--json", default=None, help="write results JSON here")
    ap.add_argument("--no-guard", action="store_true", help="don't wait for / reject on CPU contention")
    ap.add_argument("--log", default=None, help="hugo server log (default <json>.log)")
    args = ap.parse_args()

    site = os.path.abspath(args.site)
    cc = args.country
    data_path = os.path.join(site, "data", "countries", cc + ".json")
    tmp_path = os.path.join(os.path.dirname(site), ".incr-edit-%s.tmp" % os.path.basename(site))
    dest = os.path.abspath(args.dest or os.path.join(os.environ.get("BENCH_DIR") or os.path.join(tempfile.gettempdir(), "locref-bench"), "srv-%s" % os.path.basename(site)))
    subprocess.run(["rm", "-rf", dest], check=True)
    logpath = args.log or ((args.json or os.path.join(os.environ.get("BENCH_DIR") or os.path.join(tempfile.gettempdir(), "locref-bench"), "hugo-edit")) + ".log")
    with open(data_path, encoding="utf-8") as f:
        orig_text = f.read()
    orig = json.loads(orig_text)
    target_file = os.path.join(dest, cc, "index.html")
    target_url = "http://127.0.0.1:%d/%s/" % (args.port, cc)
    disk = args.mode.startswith("disk")

    srv = Server(site, args.mode, args.port, dest, logpath)
    results = {"mode": args.mode, "site": site, "country": cc, "cmd": " ".join(srv.cmd), "runs": []}
    try:
        t_start = time.monotonic()
        t_built, m, _ = srv.wait_for(BUILT_RE, 1200)
        results["initial_build_ms"] = int(m.group(1))
        srv.wait_for(re.compile(r"Web Server is available"), 120)
        results["server_ready_s"] = round(time.monotonic() - t_start, 3)
        quiet = args.quiet_s or max(1.0, min(5.0, results["initial_build_ms"] / 1000.0 * 0.5))
        srv.drain_quiet(quiet)
        if not disk:  # first visit (in fast-render mode this marks /<cc>/ as "recently visited")
            urllib.request.urlopen(target_url, timeout=60).read()
        snap = snapshot(dest) if disk else {}
        rng = random.Random(1234)
        attempts = 0
        rejected = []
        i = -1
        while len(results["runs"]) < args.runs and attempts < 4 * args.runs:
            attempts += 1
            i += 1
            # wait until nothing but this script + the idle server uses CPU
            waited = 0.0 if args.no_guard else wait_quiet_server(srv.proc.pid)
            # random phase w.r.t. Hugo's 500 ms fsnotify batching ticker (otherwise every
            # edit lands at the same phase and the batching delay is constant)
            time.sleep(rng.uniform(0, 0.5))
            marker = "EDIT-%d-%d" % (i, time.time_ns())
            d = json.loads(orig_text)
            d["facts"][0]["value"] = orig["facts"][0]["value"] + " " + marker
            text = json.dumps(d, ensure_ascii=False, indent=1) + "\n"
            with open(tmp_path, "w", encoding="utf-8") as f:
                f.write(text)
            mb = marker.encode()
            b0, s0, h0 = machine_busy(), own_cpu(), proc_cpu(srv.proc.pid)
            t0 = time.monotonic()
            os.replace(tmp_path, data_path)
            # poll the rendered page for the marker
            t_vis = None
            last_mtime = None
            t_read = 0.0
            deadline = t0 + 900
            while time.monotonic() < deadline:
                if disk:
                    # re-read when (mtime, size) changes, and at least every 20 ms
                    # (coarse mtime granularity could otherwise hide an in-place rewrite)
                    try:
                        st = os.stat(target_file)
                        key = (st.st_mtime_ns, st.st_size)
                        now = time.monotonic()
                        if key != last_mtime or now - t_read > 0.02:
                            last_mtime, t_read = key, now
                            with open(target_file, "rb") as f:
                                if mb in f.read():
                                    t_vis = time.monotonic()
                                    break
                    except FileNotFoundError:
                        pass
                    time.sleep(0.001)
                else:
                    try:
                        body = urllib.request.urlopen(target_url, timeout=60).read()
                        if mb in body:
                            t_vis = time.monotonic()
                            break
                    except Exception:
                        pass
                    time.sleep(0.005)
            # wait for Hugo's "Total in N ms" for this rebuild
            t_log, m, lines = srv.wait_for(TOTAL_RE, 900)
            b1, s1, h1 = machine_busy(), own_cpu(), proc_cpu(srv.proc.pid)
            window = time.monotonic() - t0
            other = max(0.0, (b1 - b0) - (s1 - s0) - (h1 - h0))
            after = srv.drain_quiet(quiet)
            rebuilds = sum(1 for l in lines + after if l.startswith("Change detected"))
            start = max((k for k, l in enumerate(lines) if l.startswith("Change detected")), default=0)
            t_detect = srv.times[start] if lines and lines[start].startswith("Change detected") else None
            pages = sum(1 for l in lines[start:] if "Render page" in l)
            run = {
                "run": i,
                "hugo_ms": int(m.group(1)),
                "log_ms": round((t_log - t0) * 1000, 1),
                "visible_ms": round((t_vis - t0) * 1000, 1) if t_vis else None,
                "detect_ms": round((t_detect - t0) * 1000, 1) if t_detect else None,
                "pages": pages,
                "rebuilds": rebuilds,
                "extra_totals": [int(TOTAL_RE.match(l).group(1)) for l in after if TOTAL_RE.match(l)],
                "hugo_cpu_s": round(h1 - h0, 3),
                "poller_cpu_s": round(s1 - s0, 3),
                "other_cpu_s": round(other, 3),
                "waited_s": round(waited, 1),
            }
            if disk:
                new = snapshot(dest)
                run["files_rewritten"] = sum(1 for p, mt in new.items() if snap.get(p) != mt)
                run["files_total"] = len(new)
                snap = new
            ok = args.no_guard or other <= 0.1 + 0.03 * window
            (results["runs"] if ok else rejected).append(run)
            print("  %s %d: other-cpu %.2f s, detect %s ms, hugo %s ms, log %s ms, visible %s ms, pages %d%s" % (
                "run" if ok else "REJECTED", i, other, run["detect_ms"], run["hugo_ms"], run["log_ms"], run["visible_ms"], pages,
                (", files rewritten %d/%d" % (run["files_rewritten"], run["files_total"])) if disk else ""),
                file=sys.stderr, flush=True)
        results["rejected"] = rejected
        if len(results["runs"]) < args.runs:
            print("WARNING: only %d clean runs" % len(results["runs"]), file=sys.stderr)
        results["server_peak_rss_kb"] = srv.peak_rss_kb()
    finally:
        # restore the original data file, let the server rebuild, then stop it by PID
        with open(tmp_path, "w", encoding="utf-8") as f:
            f.write(orig_text)
        os.replace(tmp_path, data_path)
        try:
            srv.wait_for(TOTAL_RE, 300)
        except Exception:
            pass
        srv.stop()

    runs = results["runs"]
    med = lambda k: statistics.median([r[k] for r in runs if r.get(k) is not None]) if runs else None
    results["median"] = {k: med(k) for k in ("detect_ms", "hugo_ms", "log_ms", "visible_ms", "pages", "files_rewritten")
                         if any(k in r for r in runs)}
    print(json.dumps({"mode": args.mode, "site": os.path.basename(site), "initial_build_ms": results.get("initial_build_ms"),
                      "server_peak_rss_kb": results.get("server_peak_rss_kb"), "median": results["median"]}))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
