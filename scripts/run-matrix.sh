#!/usr/bin/env bash
# The comparison page's cases (the set @page) with the default settings (3 runs of 1 s after
# 0.3 s of warm-up), every library built in. Extra arguments go to `ipcbench run`: cases or sets
# (`@all` for every family, as the reference run), --lib, --out, ...
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
cargo build --release --locked
exec ./target/release/ipcbench run "$@"
