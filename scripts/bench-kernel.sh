#!/usr/bin/env bash
# The kernel's channels bare (harness/examples/bare_kernel.rs: two processes, a blocking or a
# non-blocking read spun on, nothing else) against ipcbench's own stream/16B and stream-rtt/16B
# for the same channels in both receive modes, run alternately ROUNDS times (default 3) so drift
# reaches both alike. Both use 1 s windows after 0.3 s of warm-up.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
rounds=${1:-3}
channels=(uds uds-seqpacket tcp pipe fifo posix-mq)
cargo build --release --locked
cargo build --release --locked -p ipcbench --example bare_kernel
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq "$rounds"); do
  echo "round $r"
  for channel in "${channels[@]}"; do
    for mode in waiting polling; do
      ./target/release/examples/bare_kernel "$channel" stream "$mode"
      ./target/release/examples/bare_kernel "$channel" rtt "$mode"
    done
  done
  libs=$(IFS=,; echo "${channels[*]}")
  # The figures from the results file, not from what the run printed.
  rm -f "$out"/run-*.json
  ./target/release/ipcbench run stream/16B stream-rtt/16B --lib "$libs" --runs 1 --out "$out" >"$out/log" 2>&1 \
    || { cat "$out/log" >&2; exit 1; }
  python3 scripts/figures.py "$out"/run-*.json "  harness: "
done
