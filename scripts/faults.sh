#!/usr/bin/env bash
# The fault suite by hand: each fault of docs/FAULTS.md in the first trial of every pattern's
# 16 B case, for every library, each followed by its 1 KiB twin; then the table of outcomes,
# written to docs/FAULTS.md's generated section. Usage: scripts/faults.sh [ipcbench binary]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/ipcbench}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cases="stream/16B stream/1KiB stream-rtt/16B stream-rtt/1KiB broadcast/lossless/1sub/16B
  broadcast/lossless/1sub/1KiB broadcast/lossy/1sub/16B broadcast/lossy/1sub/1KiB queue/1x1/16B
  queue/1x1/1KiB service/1c1s/16B service/1c1s/1KiB"
faults="kill:setup:sending kill:setup:receiving kill:warmup:sending kill:warmup:receiving
  kill:window:sending kill:window:receiving stop:window:receiving"
for f in $faults; do
  before=$(ls /dev/shm | sort)
  # shellcheck disable=SC2086
  "$bin" run $cases --runs 1 --warmup 30ms --duration 120ms --grace 500ms \
    --fault "$f:*/16B" --out "$work/${f//:/-}" >/dev/null 2>"$work/${f//:/-}.log" &
  pid=$!
  wait $pid || true
  after=$(ls /dev/shm | sort)
  left=$(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')
  [ -d "${TMPDIR:-/tmp}/ipcb$pid" ] && left="$left ${TMPDIR:-/tmp}/ipcb$pid"
  pgrep -f -- "--name ipcb${pid}t" >/dev/null && left="$left processes"
  echo "${left:-nothing}" >"$work/${f//:/-}.left"
  echo "$f: done, left ${left:-nothing}" >&2
done
python3 - "$work" $faults <<'PY'
import json, pathlib, re, sys
work, faults = pathlib.Path(sys.argv[1]), sys.argv[2:]
docs = {f: json.loads(next((work / f.replace(":", "-")).glob("*.json")).read_text()) for f in faults}
first = docs[faults[0]]
libs = first["settings"]["libraries"]
patterns = [c for c in first["settings"]["cases"] if c.endswith("/16B")]
def cell(doc, case, lib):
    r = next(x for x in doc["results"] if x["case"] == case and x["library"] == lib)
    twin = next(x for x in doc["results"] if x["case"] == case[:-3] + "1KiB" and x["library"] == lib)
    if r["status"] == "unsupported":
        return None
    reason = r.get("reason", "")
    if r["status"] != "failed":
        return f"**{r['status']}** (expected failed)"
    if "deadline passed" in reason:
        out = "deadline; " + ("stopped role named" if "(stopped" in reason else "**stopped role not named**")
    elif "was killed by signal" in reason:
        peer = reason.split("; then ", 1)
        out = "failed; peer " + ("failed by itself" if len(peer) > 1 and "exited with code" in peer[1] else "still waiting, ended by the driver")
    else:
        out = "**failed otherwise**: " + reason[:80]
    return out + ("" if twin["status"] == "ok" else f"; **next case {twin['status']}**")
print("| library | case | " + " | ".join(f"`{f}`" for f in faults) + " |")
print("|---|---|" + "---|" * len(faults))
for lib in libs:
    for case in patterns:
        cells = [cell(docs[f], case, lib) for f in faults]
        if all(c is None for c in cells):
            continue
        print(f"| {lib} | {case} | " + " | ".join(c or "—" for c in cells) + " |")
print()
print("Left behind after each run (processes, /dev/shm entries, the run's directory): " +
      "; ".join(f"`{f}` {(work / (f.replace(':', '-') + '.left')).read_text().strip()}" for f in faults) + ".")
PY
