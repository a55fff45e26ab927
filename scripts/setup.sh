#!/usr/bin/env bash
# Installs what building and running ipcbench needs on a fresh Debian or Ubuntu machine, and
# nothing when it is already there. Sourced or run by scripts/run-matrix.sh and scripts/test.sh.
set -euo pipefail

need_apt=()
command -v cc >/dev/null 2>&1 || need_apt+=(build-essential)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
# NNG 2.0 is built from its bundled source with cmake (Debian 12's 3.25 is enough for it).
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
# Aeron's C client and media driver: bindgen needs libclang; Aeron links libbsd and libuuid.
[ -e /usr/include/bsd/string.h ] || need_apt+=(libbsd-dev)
[ -e /usr/include/uuid/uuid.h ] || need_apt+=(uuid-dev)
compgen -G "/usr/lib/llvm-*/lib/libclang.so" >/dev/null || need_apt+=(libclang-dev)
# The report's PNG charts carry DejaVu Sans, compiled in from here.
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need_apt+=(fonts-dejavu-core)
# A newer cmake for Aeron and Boost's headers come from PyPI into virtual environments (below).
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
python3 -c 'import ensurepip' >/dev/null 2>&1 || need_apt+=(python3-venv)
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

# Rust: the workspace's rust-version is the oldest cargo that builds it (Debian's own is older).
need_rust=$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' "$(dirname "${BASH_SOURCE[0]}")/../Cargo.toml")
if [ -f "$HOME/.cargo/env" ]; then . "$HOME/.cargo/env"; fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found: install Rust $need_rust or newer with rustup (https://rustup.rs), then run again" >&2
  exit 1
fi
version=$(cargo --version | awk '{print $2}')
if [ "$(printf '%s\n%s\n' "$version" "$need_rust" | sort -V | head -n1)" != "$need_rust" ]; then
  echo "setup: cargo $version is older than $need_rust: run 'rustup update', then run again" >&2
  exit 1
fi

# cpp-ipc is in no registry: it is built from a source tree CPP_IPC_SRC names (see
# adapters/cpp-ipc/README.md). Here, the copy beside the project, when there is one.
if [ -z "${CPP_IPC_SRC:-}" ] && [ -d "$(dirname "${BASH_SOURCE[0]}")/../../shared/vendor/cpp-ipc-1.4.1" ]; then
  CPP_IPC_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../shared/vendor/cpp-ipc-1.4.1" && pwd)"
  export CPP_IPC_SRC
fi

# bindgen formats the bindings it writes for Aeron with rustfmt.
if ! command -v rustfmt >/dev/null 2>&1; then
  echo "setup: adding the rustfmt component" >&2
  rustup component add rustfmt >&2
fi

# Aeron 1.54 needs cmake 3.30 or newer; Debian 12 has 3.25. Without touching the system's package
# sources, take cmake from PyPI into a virtual environment of the project's own (.tools/cmake)
# and point the builds at it (the cmake crate reads CMAKE).
cmake_at_least_3_30() {
  local v
  v=$("$1" --version 2>/dev/null | awk 'NR == 1 { print $3 }') || return 1
  [ -n "$v" ] && [ "$(printf '%s\n3.30.0\n' "$v" | sort -V | head -n1)" = "3.30.0" ]
}
if ! cmake_at_least_3_30 cmake; then
  tool="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.tools/cmake"
  if ! cmake_at_least_3_30 "$tool/bin/cmake"; then
    echo "setup: installing cmake 3.31.6 from PyPI into $tool" >&2
    rm -rf "$tool"
    python3 -m venv "$tool"
    "$tool/bin/pip" install -q --disable-pip-version-check "cmake==3.31.6" >&2
  fi
  export CMAKE="$tool/bin/cmake"
fi

# Boost.Interprocess is header-only, compiled into a small C++ shim. Debian 12 has 1.74; PyPI's
# boost-headers holds 1.85, pinned here and installed into .tools/boost (adapters/boost/build.rs
# finds it there, or where BOOST_INCLUDE_DIR points).
boost_version=1.85.0.post1
boost_tool="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.tools/boost"
if [ -z "${BOOST_INCLUDE_DIR:-}" ]; then
  if [ "$(cat "$boost_tool/version" 2>/dev/null)" != "$boost_version" ]; then
    echo "setup: installing Boost's headers $boost_version from PyPI into $boost_tool" >&2
    rm -rf "$boost_tool"
    python3 -m venv "$boost_tool/venv"
    "$boost_tool/venv/bin/pip" install -q --disable-pip-version-check \
      --target "$boost_tool/pkg" "boost-headers==$boost_version" >&2
    rm -rf "$boost_tool/venv"
    echo "$boost_version" > "$boost_tool/version"
  fi
  BOOST_INCLUDE_DIR="$boost_tool/pkg/boost_headers/include"
  export BOOST_INCLUDE_DIR
fi
