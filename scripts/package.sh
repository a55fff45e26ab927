#!/usr/bin/env bash
# One archive holding the ipcbench binary and every shared library it loads, so that one build
# runs on several machines: copy the archive, unpack it anywhere, run ipcbench from the folder.
# The binary looks for its libraries in lib/ beside itself ($ORIGIN/lib). The C library's own
# (libc, libm, ld-linux, ...) are left out: they must be the host's, so the host needs a glibc at
# least as new as this one's and the same architecture.
#
#   scripts/package.sh [--binary PATH] [--out DIR]
#
# Without --binary it sets up and builds first (as scripts/run-matrix.sh does). Prints the
# archive's path: DIR/ipcbench-<version>-<arch>-linux.tar.gz (DIR: dist).
set -euo pipefail
cd "$(dirname "$0")/.."

binary="" out="dist"
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="${2:?--binary needs a path}"; shift 2 ;;
    --out) out="${2:?--out needs a folder}"; shift 2 ;;
    *) echo "package: unknown argument $1 (give --binary PATH, --out DIR)" >&2; exit 2 ;;
  esac
done
if [ -z "$binary" ]; then
  . scripts/setup.sh
  cargo build --release --locked >&2
  binary=target/release/ipcbench
fi
[ -x "$binary" ] || { echo "package: $binary is not an executable" >&2; exit 2; }

deps=$(ldd "$binary")
if grep -q "not found" <<<"$deps"; then
  echo "package: $binary cannot find some of its libraries here:" >&2
  grep "not found" <<<"$deps" >&2
  exit 1
fi
version=$("$binary" --version | awk '{ print $2 }')
name="ipcbench-$version-$(uname -m)-linux"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name/lib"
cp "$binary" "$stage/$name/ipcbench"
# `soname => path (address)`: every library the loader resolved, under the name it looks for.
while read -r soname path; do
  case "$soname" in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.* | ld-linux*) ;;
    *) cp -L "$path" "$stage/$name/lib/$soname" ;;
  esac
done < <(awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' <<<"$deps")
cp README.md "$stage/$name/"
mkdir -p "$out"
tar -C "$stage" -czf "$out/$name.tar.gz" "$name"
echo "$out/$name.tar.gz"
