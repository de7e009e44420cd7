#!/usr/bin/env bash
# locref against Hugo on the workloads of bench/workloads.sh, paired (A B A B ..., one warm-up each):
#
#   clean build   A: locref build --clean --out DIR   B: hugo --quiet --cleanDestinationDir -d DIR
#                 each run into a folder removed first (and locref's .locref-cache beside it)
#   no-op build   A: locref build --out DIR           B: hugo --quiet -d DIR
#                 into the folder the tool built, nothing changed
#
#   bench/compare_hugo.sh              # scales 1 10 100; RUNS=11 at x1, 7 at x10, 5 at x100
#   RUNS=5 bench/compare_hugo.sh 1     # x1 only, 5 pairs
#   GUARD=1 bench/compare_hugo.sh 1    # wait for a quiet machine, run disturbed runs again
#
# Prints pair.py's table for each (wall, CPU, peak RSS; A/B pair by pair; B/A = Hugo ÷ locref, above 1
# locref is faster) and writes it as JSON to $BENCH_DIR/results/. SOURCE_DATE_EPOCH is fixed so that two
# builds of one workload are byte-identical. Needs hugo (0.111.3, Debian's `hugo` package, for figures
# comparable with BENCHMARKS.md), python3 and the release binary.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
B="${BENCH_DIR:-${TMPDIR:-/tmp}/locref-bench}"
scales="${*:-1 10 100}"
locref="${LOCREF:-$repo/target/release/locref}"
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-1767225600}"
guard=()
[ -n "${GUARD:-}" ] && guard=(--guard)
command -v hugo >/dev/null || { echo "hugo is not installed (Debian: apt-get install hugo)" >&2; exit 2; }
[ -x "$locref" ] || { echo "no release binary at $locref: cargo build --release" >&2; exit 2; }
mkdir -p "$B/results" "$B/runs"
echo "$(hugo version | cut -d' ' -f1-2); locref $(git -C "$repo" rev-parse --short HEAD); $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
for s in $scales; do
  [ -d "$B/x$s/sources" ] && [ -d "$B/hugo-x$s" ] || { echo "no workload x$s: bench/workloads.sh $s" >&2; exit 2; }
  case "$s" in 1) n="${RUNS:-11}" ;; 10) n="${RUNS:-7}" ;; *) n="${RUNS:-5}" ;; esac
  l="$B/runs/locref-x$s"; h="$B/runs/hugo-x$s"
  python3 "$repo/bench/pair.py" "${guard[@]}" --runs "$n" --label "x$s clean build: A locref, B Hugo" \
    --cwd-a "$B/x$s" --prepare-a "rm -rf '$l'" --a "$locref build --clean --out $l/out" \
    --cwd-b "$B/hugo-x$s" --prepare-b "rm -rf '$h'" --b "hugo --quiet --cleanDestinationDir -d $h/out" \
    --json "$B/results/clean-x$s.json"
  printf 'x%s output: locref %s files, %s; Hugo %s files, %s\n' "$s" \
    "$(find "$l/out" -type f | wc -l)" "$(du -sb "$l/out" | cut -f1) bytes" \
    "$(find "$h/out" -type f | wc -l)" "$(du -sb "$h/out" | cut -f1) bytes"
  python3 "$repo/bench/pair.py" "${guard[@]}" --runs "$n" --label "x$s no-op build: A locref, B Hugo" \
    --cwd-a "$B/x$s" --a "$locref build --out $l/out" \
    --cwd-b "$B/hugo-x$s" --b "hugo --quiet -d $h/out" \
    --json "$B/results/noop-x$s.json"
done
