#!/usr/bin/env bash
# The tests: every crate's, in the release profile the benchmark itself is built with (one
# build serves both). Extra arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
cargo test --release --locked --workspace --lib --bins --tests "$@"
