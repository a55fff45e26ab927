#!/usr/bin/env bash
# Renders a report's HTML page in headless Chromium (Debian's chromium package, installed here if
# missing) and saves a screenshot beside it, to look at: scripts/render-report.sh results/run-<time>
# (the folder `ipcbench run` or `ipcbench report` wrote). Prints the screenshot's path.
set -euo pipefail

dir=${1:?usage: scripts/render-report.sh REPORT_FOLDER (the one holding index.html)}
page="$(cd "$dir" && pwd)/index.html"
[ -f "$page" ] || { echo "render-report: no index.html in $dir" >&2; exit 2; }

if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "render-report: chromium is missing and I am not root and have no sudo; install it, then run again" >&2
    exit 1
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >&2
fi

shot="$(dirname "$page")/screenshot.png"
# No network: the page is self-contained, so a render that needs one would show it broken.
timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --disable-extensions \
  --window-size=1400,4000 --screenshot="$shot" "file://$page" >/dev/null 2>&1
[ -s "$shot" ] || { echo "render-report: chromium wrote no screenshot" >&2; exit 1; }
echo "$shot"
