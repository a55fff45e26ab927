#!/usr/bin/env bash
# How much the harness itself costs: the minimal fipc loop (adapters/fastipc/examples/baseline.rs)
# against ipcbench's own stream/16B and stream-rtt/16B for FastIPC, run alternately ROUNDS times
# (default 3) so drift reaches both alike. Both use 1 s windows after 0.3 s of warm-up.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
rounds=${1:-3}
cargo build --release --locked
cargo build --release --locked -p ipcbench-fastipc --example baseline
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq "$rounds"); do
  echo "round $r"
  for mode in waiting polling; do
    ./target/release/examples/baseline stream "$mode"
    ./target/release/examples/baseline rtt "$mode"
  done
  # The figures from the results file, not from what the run printed.
  rm -f "$out"/run-*.json
  ./target/release/ipcbench run stream/16B stream-rtt/16B --lib fastipc --runs 1 --out "$out" >"$out/log" 2>&1 \
    || { cat "$out/log" >&2; exit 1; }
  python3 scripts/figures.py "$out"/run-*.json "  harness: "
done
