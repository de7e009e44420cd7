#!/usr/bin/env python3
"""Time a command as a whole process, alone or paired with a second one run in turn (A B A B ...).

Python 3 standard library only; Linux (wait4 and /proc/stat).

    python3 bench/pair.py --runs 11 --cwd-a X1 --prepare-a 'rm -rf /tmp/o' \\
        --a '/repo/target/release/locref build --clean --out /tmp/o' \\
        --cwd-b H1 --prepare-b 'rm -rf /tmp/h' --b 'hugo --quiet --cleanDestinationDir -d /tmp/h'

Per run, from the kernel: wall time (around fork/exec and wait4), the child's user and system CPU and its
peak RSS (ru_maxrss, what `/usr/bin/time -v` prints as "Maximum resident set size"), and the CPU the rest
of the machine used meanwhile (/proc/stat), printed as other_cpu. One warm-up of each first, not counted.
The --prepare commands (a shell line: removing the output folder) run before each run and are not timed.
Prints the minimum, median and maximum of each figure, and with --b the ratio A/B of wall and CPU taken
pair by pair (so a comparison holds when the machine's speed drifts), and B/A of the wall ("Hugo ÷
locref" when B is Hugo: above 1, A is faster).

--guard waits before each run until the rest of the machine is idle, and runs again a run during which
others used more than 0.1 s + 3 % of its wall time of CPU (a shared machine); without it every run
counts and other_cpu says how quiet the machine was.

The same figures without this script: hyperfine (`hyperfine --warmup 1 --runs 11 --prepare 'rm -rf
/tmp/o' 'locref build --clean --out /tmp/o'`) gives the wall and CPU times but neither the peak RSS nor
alternated pairs; `/usr/bin/time -v CMD` gives one run's peak RSS. Run the two commands in turn by hand
and take the ratio pair by pair.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

TCK = os.sysconf("SC_CLK_TCK")


def machine_busy():
    """Busy CPU-seconds of the whole machine so far (user, nice, system, irq, softirq, steal)."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
    except OSError:
        return 0.0
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / TCK


def own_cpu():
    t = os.times()
    return t.user + t.system


def wait_quiet(threshold=0.08, window=1.0, need=2, max_wait=600):
    """Blocks until the rest of the machine uses under `threshold` cores for `need` windows in a row."""
    started, quiet = time.monotonic(), 0
    while quiet < need and time.monotonic() - started < max_wait:
        b0, s0 = machine_busy(), own_cpu()
        time.sleep(window)
        load = max(0.0, (machine_busy() - b0) - (own_cpu() - s0)) / window
        quiet = quiet + 1 if load < threshold else 0
    return time.monotonic() - started


def run_once(cmd, cwd, prepare):
    if prepare:
        subprocess.run(prepare, shell=True, check=True, cwd=cwd)
    b0, s0 = machine_busy(), own_cpu()
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    other = max(0.0, machine_busy() - b0 - (own_cpu() - s0) - ru.ru_utime - ru.ru_stime)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit("exit %d: %s\n%s" % (code, shlex.join(cmd), err[-2000:]))
    return {
        "wall_s": wall,
        "user_s": ru.ru_utime,
        "sys_s": ru.ru_stime,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "peak_rss_mib": ru.ru_maxrss / 1024,
        "other_cpu_s": other,
    }


def counted(cmd, cwd, prepare, guard):
    """One counted run; with `guard`, run again (up to three more times) while others disturbed it."""
    for _ in range(4):
        if guard:
            wait_quiet()
        r = run_once(cmd, cwd, prepare)
        if not guard or r["other_cpu_s"] <= 0.1 + 0.03 * r["wall_s"]:
            return r
        print("  run disturbed (others used %.2f CPU-s); again" % r["other_cpu_s"], file=sys.stderr)
    r["disturbed"] = True
    return r


def spread(values):
    return min(values), statistics.median(values), max(values)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="command A, split as a shell splits words (no shell)")
    ap.add_argument("--b", help="command B, run in turn with A")
    ap.add_argument("--cwd-a", default=".")
    ap.add_argument("--cwd-b", default=".")
    ap.add_argument("--prepare-a", help="shell line run before each run of A, not timed")
    ap.add_argument("--prepare-b", help="shell line run before each run of B, not timed")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--guard", action="store_true", help="wait for a quiet machine; run a disturbed run again")
    ap.add_argument("--label", default="")
    ap.add_argument("--json", help="write every run and the summary here")
    a = ap.parse_args()
    sides = [("A", shlex.split(a.a), a.cwd_a, a.prepare_a)]
    if a.b:
        sides.append(("B", shlex.split(a.b), a.cwd_b, a.prepare_b))
    for _ in range(a.warmup):
        for _name, cmd, cwd, prepare in sides:
            run_once(cmd, cwd, prepare)
    runs = {name: [] for name, *_ in sides}
    for _ in range(a.runs):
        for name, cmd, cwd, prepare in sides:
            runs[name].append(counted(cmd, cwd, prepare, a.guard))
    summary = {"label": a.label, "runs": a.runs, "commands": {n: shlex.join(c) for n, c, *_ in sides}}
    print("%s (n = %d%s)" % (a.label or "pair.py", a.runs, ", guarded" if a.guard else ""))
    for name, cmd, *_ in sides:
        print("  %s: %s" % (name, shlex.join(cmd)))
    print("  %-16s %s" % ("", "".join("%-26s" % ("%s min / median / max" % n) for n, *_ in sides)))
    for key, unit in (("wall_s", "s"), ("cpu_s", "s"), ("user_s", "s"), ("sys_s", "s"),
                      ("peak_rss_mib", "MiB"), ("other_cpu_s", "s")):
        cells = []
        for name, *_ in sides:
            lo, mid, hi = spread([r[key] for r in runs[name]])
            summary.setdefault(name, {})[key] = {"min": lo, "median": mid, "max": hi}
            fmt = "%.1f / %.1f / %.1f" if unit == "MiB" else "%.3f / %.3f / %.3f"
            cells.append(fmt % (lo, mid, hi))
        print("  %-16s %s" % ("%s (%s)" % (key[:-2] if unit == "s" else "peak RSS", unit),
                              "".join("%-26s" % c for c in cells)))
    if a.b:
        for key in ("wall_s", "cpu_s"):
            ratios = [ra[key] / rb[key] for ra, rb in zip(runs["A"], runs["B"])]
            lo, mid, hi = spread(ratios)
            summary["A/B " + key] = {"min": lo, "median": mid, "max": hi}
            print("  A/B %-12s %.3f (pairs %.3f - %.3f)" % (key[:-2], mid, lo, hi))
        ratios = [rb["wall_s"] / ra["wall_s"] for ra, rb in zip(runs["A"], runs["B"])]
        lo, mid, hi = spread(ratios)
        summary["B/A wall_s"] = {"min": lo, "median": mid, "max": hi}
        print("  B/A %-12s %.2fx (pairs %.2f - %.2f)" % ("wall", mid, lo, hi))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"summary": summary, "runs": runs}, f, indent=1)


if __name__ == "__main__":
    main()
