#!/usr/bin/env bash
# How far a series' runs lie apart (a benchmark, not a test): a fixed set of cases over every
# library in both receive modes, once with each variant of the settings, the variants
# alternated case by case so that a drift of the host reaches each alike, then `ipcbench
# spread` on each variant's files: the spread's median, p75 and p90 and the share of series
# that resolve a 10 % change at 3 runs.
#
#   scripts/bench-spread.sh [VARIANT ...]     (default: before after)
#
# Variants: before (the defaults before the sampled check: --verify full), after (today's
# defaults), pinned (--pin), warmup1s (--warmup 1s), full-pinned (--verify full --pin).
# Environment: SPREAD_RUNS (runs of each series, default 10), SPREAD_CASES (default below),
# SPREAD_LIBS (default every library), SPREAD_OUT (default results/spread-<time>).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
cargo build --release --locked

runs=${SPREAD_RUNS:-10}
cases=${SPREAD_CASES:-"stream/16B stream/1KiB stream-rtt/16B stream-rtt/1KiB latency/100k/16B"}
out=${SPREAD_OUT:-results/spread-$(date -u +%Y-%m-%dT%H-%M-%SZ)}
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(before after)

flags() {
  case "$1" in
    before) echo "--verify full" ;;
    after) echo "" ;;
    pinned) echo "--pin" ;;
    warmup1s) echo "--warmup 1s" ;;
    full-pinned) echo "--verify full --pin" ;;
    *) echo "bench-spread: unknown variant '$1' (before, after, pinned, warmup1s, full-pinned)" >&2; return 2 ;;
  esac
}
for v in "${variants[@]}"; do flags "$v" >/dev/null; mkdir -p "$out/$v"; done

lib=()
[ -z "${SPREAD_LIBS:-}" ] || lib=(--lib "$SPREAD_LIBS")
echo "bench-spread: ${variants[*]}, $runs runs of each series, into $out" >&2
for case in $cases; do
  for v in "${variants[@]}"; do
    echo "bench-spread: $case, $v" >&2
    # shellcheck disable=SC2046 # the variant's flags are words
    ./target/release/ipcbench run "$case" --runs "$runs" --skip-oversubscribed "${lib[@]}" $(flags "$v") \
      --out "$out/$v" >>"$out/$v/log" 2>&1 || { tail -20 "$out/$v/log" >&2; exit 1; }
  done
done
args=()
for v in "${variants[@]}"; do args+=("$out/$v"); done
./target/release/ipcbench spread "${args[@]}"
