#!/usr/bin/env bash
# What checking every byte costs (a benchmark, not a test): the same cases run with --verify
# full and --verify sample, alternated ROUNDS times (default 3, the first order drawn by the
# round's number so each goes first as often), then each case, library and mode's figure under
# both: the median of each side's runs and the median of the per-round ratios sample / full.
#
#   scripts/bench-verify.sh [ROUNDS]
#
# Environment: VERIFY_CASES (default: the 1 KiB and 64 KiB streams and round trips),
# VERIFY_LIBS (default shm-ring), VERIFY_RUNS (runs of each side in a round, default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
cargo build --release --locked

rounds=${1:-3}
cases=${VERIFY_CASES:-"stream/1KiB stream-rtt/1KiB stream/64KiB stream-rtt/64KiB"}
libs=${VERIFY_LIBS:-shm-ring}
runs=${VERIFY_RUNS:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq "$rounds"); do
  order=(full sample)
  [ $((r % 2)) -eq 0 ] && order=(sample full)
  for v in "${order[@]}"; do
    echo "bench-verify: round $r, --verify $v" >&2
    mkdir -p "$out/$v-$r"
    # shellcheck disable=SC2086 # the cases are words
    ./target/release/ipcbench run $cases --lib "$libs" --runs "$runs" --verify "$v" --out "$out/$v-$r" \
      >"$out/$v-$r/log" 2>&1 || { tail -20 "$out/$v-$r/log" >&2; exit 1; }
  done
done
python3 - "$out" "$rounds" <<'EOF'
import glob, json, statistics, sys

out, rounds = sys.argv[1], int(sys.argv[2])
def figures(path):
    """(case, library, mode) -> the median of the ranked figure over the runs of one file."""
    doc = json.load(open(glob.glob(path + "/run-*.json")[0]))
    got = {}
    for r in doc["results"]:
        if r["status"] != "ok":
            continue
        key = "p50_ns" if r["pattern"] == "stream-rtt" else "msgs_per_s"
        for m in r["modes"]:
            vals = [x["figures"][key] for x in m["runs"] if x["figures"].get(key)]
            if vals:
                got[(r["case"], r["library"], m["mode"])] = statistics.median(vals)
    return got
full = [figures("%s/full-%d" % (out, r)) for r in range(1, rounds + 1)]
sample = [figures("%s/sample-%d" % (out, r)) for r in range(1, rounds + 1)]
print("case library mode | full | sample | sample/full per round (median; each)")
for key in sorted(full[0]):
    f = [x[key] for x in full if key in x]
    s = [x[key] for x in sample if key in x]
    if len(f) != rounds or len(s) != rounds:
        continue
    ratios = [b / a for a, b in zip(f, s)]
    unit = "ns" if key[0].startswith("stream-rtt") else "msg/s"
    fmt = (lambda v: "%.0f ns" % v) if unit == "ns" else (lambda v: "%.3f M" % (v / 1e6))
    print("%s %s %s | %s | %s | %.3f (%s)" % (key[0], key[1], key[2], fmt(statistics.median(f)),
          fmt(statistics.median(s)), statistics.median(ratios), ", ".join("%.3f" % x for x in ratios)))
EOF
