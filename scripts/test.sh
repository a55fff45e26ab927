#!/usr/bin/env bash
# The tests: every crate's, in the release profile the benchmark itself is built with (one
# build serves both). Extra arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
# The reference report's page is read in a real browser (harness/tests/cli/browser.rs):
# Debian's chromium (Ubuntu's chromium-browser), installed here when neither is there.
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "test: chromium is missing and I am not root and have no sudo; install it, then run again" >&2
    exit 1
  fi
  echo "test: installing chromium" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >&2 ||
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium-browser >&2
fi
cargo test --release --locked --workspace --lib --bins --tests "$@"
