#!/usr/bin/env bash
# Writes the workloads of BENCHMARKS.md under $BENCH_DIR (default ${TMPDIR:-/tmp}/locref-bench), from this
# repository alone:
#
#   x1, x10, x100     locref projects (sources/ and rules/): x1 is the shipped sources; x10 and x100 are
#                     grown by the tests' generator (tests/testsuite/common/scale.rs, run through
#                     `cargo bench --bench rebuild` with BENCH_WORKLOAD_OUT), whose synthetic rows pass
#                     `locref check`: they cite registered publishers only
#   x<N>-r<R>         with BENCH_MORE_RELEASES=R: the same project with R more releases made by
#                     `locref release`, three facts revised in each (slow: minutes)
#   hugo-x1, ...      Hugo's equivalent sites (bench/hugo_site.py)
#
# then runs `locref check` on each locref project (a workload that fails it measures nothing).
#
#   bench/workloads.sh              # scales 1 10 100
#   bench/workloads.sh 1            # x1 only
#   BENCH_MORE_RELEASES=150 bench/workloads.sh 1
#
# Needs cargo, python3 (standard library only), and the release binary (built here if missing; LOCREF
# names another).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
B="${BENCH_DIR:-${TMPDIR:-/tmp}/locref-bench}"
scales="${*:-1 10 100}"
locref="${LOCREF:-$repo/target/release/locref}"
case "$(realpath -m "$B")/" in
  "$repo"/*) echo "refusing BENCH_DIR inside the repository: $B" >&2; exit 2 ;;
esac
if [ ! -x "$locref" ]; then
  (cd "$repo" && cargo build --release --locked)
fi
mkdir -p "$B"
for s in $scales; do
  rm -rf "${B:?}/x$s" "${B:?}/x$s-r"*
done
# x1 is the shipped sources and rules as they are (what the generator writes for it); the grown scales,
# and more releases, come from one cargo call: the generator is the one the scale tests use.
grown=()
for s in $scales; do
  if [ "$s" = 1 ] && [ -z "${BENCH_MORE_RELEASES:-}" ]; then
    mkdir -p "$B/x1" && cp -a "$repo/sources" "$repo/rules" "$B/x1/" && echo "wrote $B/x1"
  else
    grown+=("$s")
  fi
done
if [ "${#grown[@]}" -gt 0 ]; then
  (cd "$repo" && BENCH_SCALES="$(IFS=,; echo "${grown[*]}")" BENCH_WORKLOAD_OUT="$B" \
    cargo bench --locked --bench rebuild)
fi
for s in $scales; do
  python3 "$repo/bench/hugo_site.py" --scale "$s" --out "$B/hugo-x$s"
  for p in "$B/x$s" "$B/x$s-r"*; do
    [ -d "$p" ] || continue
    printf '%s: %s sources/, ' "$(basename "$p")" "$(du -sh "$p/sources" | cut -f1)"
    (cd "$p" && "$locref" check >/dev/null) && echo "locref check passes"
  done
done
