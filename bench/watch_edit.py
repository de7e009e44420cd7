#!/usr/bin/env python3
"""One-fact edit latency through a running `locref watch`: the one-fact save to disk (stdlib only).

    python3 bench/watch_edit.py --proj /tmp/locref-bench/x1 --work /tmp/locref-bench/watch-x1 --runs 11

--proj is a project (its sources/ and rules/; bench/workloads.sh writes x1, x10, x100), edited in place
and put back at the end; --work gets the output folder (out/) and the watch's log; --locref is the binary
(default: this repository's target/release/locref).

Per run (after ~1 s pause + 0-200 ms jitter):
  * edit de's `VAT / GST` fact in sources/tables/countries.csv (fixed-length marker EDIT#### placed in the
    value text), written to a temp file in the project root (outside sources/) and renamed into place;
    t0 (monotonic and wall) taken just before the rename.
  * visible_ms: t0 -> /de/index.html on disk contains the marker (stat every 1 ms, re-read on change or every
    20 ms; the same poll as the Hugo anchor's incr.py disk mode).
  * line_ms: t0 -> the rebuild line printed by locref arrives on its stdout.
  * locref_ms: the time locref prints on that line.
  * last_file_ms: max(mtime of every output whose mtime changed) - t0_wall; files_rewritten: how many.
  * watch_cpu_s: CPU of the watch process during the run; other_cpu_s: CPU of everything else.
Peak RSS of the watch process (VmHWM) is read at the end. The watch is stopped by its PID (SIGINT).
Prints each run on stderr, then one JSON line: the medians, minima and maxima (run 0, the first edit of
the session, is a warm-up and not counted). "Save to last changed file" in BENCHMARKS.md is last_file_ms.
"""
import argparse
import json
import os
import queue
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from pair import machine_busy, own_cpu  # noqa: E402

TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid):
    """User and system CPU of a live process (and its reaped children), in seconds."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
    except OSError:
        return 0.0
    fields = s[s.rindex(")") + 2:].split()
    return sum(int(x) for x in fields[11:15]) / TCK

LINE_RE = re.compile(r"^changed (.*?); (\d+) queries re-ran; (?:wrote (.*)|wrote 0 files|wrote no files|(.*?)); ([\d.]+) ms$")


def snapshot(dest):
    snap = {}
    for root, _d, files in os.walk(dest):
        for fn in files:
            p = os.path.join(root, fn)
            try:
                snap[p] = os.stat(p).st_mtime_ns
            except FileNotFoundError:
                pass
    return snap


def vm(pid, key):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--proj", required=True, help="the project: sources/ and rules/ (edited, then put back)")
    ap.add_argument("--locref", default=os.path.join(os.path.dirname(HERE), "target", "release", "locref"))
    ap.add_argument("--work", required=True, help="parent folder of the output (its .locref-cache lives there)")
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--pause", type=float, default=1.0)
    ap.add_argument("--settle", type=float, default=3.0)
    ap.add_argument("--json")
    ap.add_argument("--reader", choices=["none", "paced", "tight"], default="none",
                    help="a second process reading out/fr/index.html while the edits run: every 1 ms "
                         "(paced) or in a loop (tight), as a static server or a sync tool would")
    a = ap.parse_args()
    proj = os.path.abspath(a.proj)
    work, repo = os.path.realpath(a.work), os.path.realpath(os.path.dirname(HERE))
    # --work is removed and made again: never a folder holding the repository or the project.
    for keep in (repo, os.path.realpath(proj)):
        if (keep + os.sep).startswith(work + os.sep) or (work + os.sep).startswith(repo + os.sep):
            sys.exit("refusing --work %s: it holds %s or is inside the repository" % (a.work, keep))
    if os.path.exists(a.work):
        shutil.rmtree(a.work)
    os.makedirs(a.work)
    out = os.path.join(a.work, "out")
    src = os.path.join(proj, "sources/tables/countries.csv")
    tmp = os.path.join(proj, ".edit.tmp")
    orig = open(src, encoding="utf-8").read()
    lines = orig.split("\n")
    idx = [i for i, l in enumerate(lines) if l.startswith("de,VAT / GST,")]
    assert len(idx) == 1, idx
    row = lines[idx[0]]
    anchor = "Umsatzsteuer."
    assert anchor in row
    target = os.path.join(out, "de", "index.html")

    log = open(os.path.join(a.work, "watch.log"), "w")
    q = queue.Queue()
    proc = subprocess.Popen([os.path.abspath(a.locref), "watch", "--out", out], cwd=proj,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)

    def reader():
        for line in proc.stdout:
            now = time.monotonic()
            log.write("%.6f %s" % (now, line))
            log.flush()
            # a watch line may start with the time of day ("21:47:26 changed …"): compare what follows it
            q.put((now, re.sub(r"^\d{2}:\d{2}:\d{2}(?:\.\d+)? ", "", line.rstrip("\n"))))
        q.put((time.monotonic(), None))

    threading.Thread(target=reader, daemon=True).start()

    def wait_line(pred, timeout):
        deadline = time.monotonic() + timeout
        while True:
            t, l = q.get(timeout=max(0.01, deadline - time.monotonic()))
            if l is None:
                raise RuntimeError("watch exited rc=%s" % proc.poll())
            if pred(l):
                return t, l

    res = {"proj": proj, "cmd": "locref watch --out " + out, "reader": a.reader, "runs": []}
    reading = None
    if a.reader != "none":
        # A process of its own (not a thread of this one), so its reads are the only events it makes.
        pause = "0.001" if a.reader == "paced" else "0"
        code = ("import os,sys,time\n"
                "p,pause=sys.argv[1],float(sys.argv[2])\n"
                "while True:\n"
                "    try:\n"
                "        open(p,'rb').read()\n"
                "    except OSError:\n"
                "        pass\n"
                "    if pause: time.sleep(pause)\n")
        reading = subprocess.Popen([sys.executable, "-c", code, os.path.join(out, "fr", "index.html"), pause])
    try:
        t_start = time.monotonic()
        _, first = wait_line(lambda l: re.search(r"queries re-ran; wrote", l) is not None, 1200)
        res["initial_line"] = first
        wait_line(lambda l: l.startswith("watching "), 60)
        res["ready_s"] = round(time.monotonic() - t_start, 3)
        time.sleep(a.settle)  # spares are made after the first build
        snap = snapshot(out)
        res["files_total"] = len(snap)
        rng = random.Random(7)
        for i in range(a.runs + 1):  # run 0 is a warm-up, not counted
            time.sleep(a.pause + rng.uniform(0, 0.2))
            marker = "EDIT%04d" % i
            new_row = row.replace(anchor, anchor + " " + marker, 1)
            text = "\n".join(lines[:idx[0]] + [new_row] + lines[idx[0] + 1:])
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
            mb = marker.encode()
            b0, s0, w0 = machine_busy(), own_cpu(), proc_cpu(proc.pid)
            t0w = time.time()
            t0 = time.monotonic()
            os.replace(tmp, src)
            t_vis, last, t_read = None, None, 0.0
            while time.monotonic() < t0 + 600:
                try:
                    st = os.stat(target)
                    key = (st.st_mtime_ns, st.st_size, st.st_ino)
                    now = time.monotonic()
                    if key != last or now - t_read > 0.02:
                        last, t_read = key, now
                        with open(target, "rb") as f:
                            if mb in f.read():
                                t_vis = time.monotonic()
                                break
                except FileNotFoundError:
                    pass
                time.sleep(0.001)
            t_line, l = wait_line(lambda l: l.startswith("changed "), 600)
            time.sleep(0.05)
            b1, s1, w1 = machine_busy(), own_cpu(), proc_cpu(proc.pid)
            new = snapshot(out)
            changed = [p for p, mt in new.items() if snap.get(p) != mt]
            last_ms = (max(new[p] for p in changed) / 1e9 - t0w) * 1000 if changed else None
            snap = new
            m = re.search(r"(\d+) queries re-ran", l)
            ms = re.search(r"; ([\d.]+) ms$", l)
            run = {
                "run": i,
                "locref_ms": float(ms.group(1)) if ms else None,
                "line_ms": round((t_line - t0) * 1000, 1),
                "visible_ms": round((t_vis - t0) * 1000, 1) if t_vis else None,
                "last_file_ms": round(last_ms, 1) if last_ms is not None else None,
                "files_rewritten": len(changed),
                "queries": int(m.group(1)) if m else None,
                "watch_cpu_s": round(w1 - w0, 3),
                "other_cpu_s": round(max(0.0, (b1 - b0) - (s1 - s0) - (w1 - w0)), 3),
                "line": l[:300],
            }
            print("  run %d: locref %s ms, line %s ms, visible %s ms, last file %s ms, files %d, queries %s, other-cpu %.2f" % (
                i, run["locref_ms"], run["line_ms"], run["visible_ms"], run["last_file_ms"], run["files_rewritten"],
                run["queries"], run["other_cpu_s"]), file=sys.stderr, flush=True)
            if i > 0:
                res["runs"].append(run)
        res["peak_rss_kb"] = vm(proc.pid, "VmHWM")
        res["rss_kb_end"] = vm(proc.pid, "VmRSS")
    finally:
        if reading is not None:
            reading.kill()
            reading.wait()
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(orig)
        os.replace(tmp, src)
        try:
            wait_line(lambda l: l.startswith("changed "), 120)
        except Exception:
            pass
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()
    runs = res["runs"]
    res["median"] = {k: statistics.median([r[k] for r in runs if r[k] is not None])
                     for k in ("locref_ms", "line_ms", "visible_ms", "last_file_ms", "files_rewritten", "queries", "watch_cpu_s")}
    res["min"] = {k: min(r[k] for r in runs if r[k] is not None) for k in ("locref_ms", "line_ms", "visible_ms", "last_file_ms")}
    res["max"] = {k: max(r[k] for r in runs if r[k] is not None) for k in ("locref_ms", "line_ms", "visible_ms", "last_file_ms")}
    print(json.dumps({"proj": os.path.basename(proj), "peak_rss_kb": res.get("peak_rss_kb"), "median": res["median"],
                      "min": res["min"], "max": res["max"]}))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
