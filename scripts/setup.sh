#!/usr/bin/env bash
# Installs what building and running ipcbench needs on a fresh Debian or Ubuntu machine, and
# nothing when it is already there. Sourced or run by scripts/run-matrix.sh and scripts/test.sh.
set -euo pipefail

need_apt=()
command -v cc >/dev/null 2>&1 || need_apt+=(build-essential)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
# NNG 2.0 is built from its bundled source with cmake (Debian 12's 3.25 is enough for it).
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
# Records the hypervisor and container in the results (optional, but cheap).
command -v systemd-detect-virt >/dev/null 2>&1 || need_apt+=(systemd)

if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "setup: need ${need_apt[*]} but am not root and have no sudo; install them, then run again" >&2
    exit 1
  fi
  echo "setup: installing ${need_apt[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >&2
fi

# Rust: edition 2024 needs cargo 1.85 or newer (Debian's own cargo is older).
if [ -f "$HOME/.cargo/env" ]; then . "$HOME/.cargo/env"; fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found: install Rust 1.85 or newer with rustup (https://rustup.rs), then run again" >&2
  exit 1
fi
version=$(cargo --version | awk '{print $2}')
if [ "$(printf '%s\n1.85.0\n' "$version" | sort -V | head -n1)" != "1.85.0" ]; then
  echo "setup: cargo $version is older than 1.85: run 'rustup update', then run again" >&2
  exit 1
fi
