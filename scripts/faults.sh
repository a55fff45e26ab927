#!/usr/bin/env bash
# The fault suite by hand: each fault of docs/FAULTS.md in the first trial of each listed 16 B
# case, for every library, each followed by its 1 KiB twin; then a table of outcomes per group,
# printed for docs/FAULTS.md. Usage: [FAULT_GROUPS=pairs,fours,setup-stop] scripts/faults.sh [binary]
#
# The groups: every pattern's 2-process case under seven faults; the 4-process variants (a
# subscriber, a consumer, a server of four killed); SIGSTOP in set-up (each waits out the set-up
# deadline, a short --setup-timeout keeps it short).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/ipcbench}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# group name | cases | faults | extra flags
groups=(
  "pairs|stream/16B stream/1KiB stream-rtt/16B stream-rtt/1KiB broadcast/lossless/1sub/16B broadcast/lossless/1sub/1KiB broadcast/lossy/1sub/16B broadcast/lossy/1sub/1KiB queue/1x1/16B queue/1x1/1KiB service/1c1s/16B service/1c1s/1KiB|kill:setup:sending kill:setup:receiving kill:warmup:sending kill:warmup:receiving kill:window:sending kill:window:receiving stop:window:receiving|"
  "fours|broadcast/lossless/4sub/16B broadcast/lossless/4sub/1KiB queue/4x4/16B queue/4x4/1KiB service/4c4s/16B service/4c4s/1KiB|kill:setup:receiving kill:window:receiving|"
  "setup-stop|stream/16B stream/1KiB|stop:setup:receiving|--setup-timeout 1s"
)
for g in "${groups[@]}"; do
  IFS='|' read -r name cases faults extra <<<"$g"
  # FAULT_GROUPS=fours,setup-stop runs only those groups.
  [ -n "${FAULT_GROUPS:-}" ] && [[ ",$FAULT_GROUPS," != *",$name,"* ]] && continue
  for f in $faults; do
    out="$work/$name/${f//:/-}"
    mkdir -p "$out"
    before=$(ls /dev/shm | sort)
    # shellcheck disable=SC2086
    "$bin" run $cases --runs 1 --warmup 30ms --duration 120ms --grace 500ms $extra \
      --fault "$f:*/16B" --out "$out" >/dev/null 2>"$out.log" &
    pid=$!
    wait $pid || true
    after=$(ls /dev/shm | sort)
    left=$(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')
    [ -d "${TMPDIR:-/tmp}/ipcb$pid" ] && left="$left ${TMPDIR:-/tmp}/ipcb$pid"
    pgrep -f -- "--name ipcb${pid}t" >/dev/null && left="$left processes"
    echo "${left:-nothing}" >"$out.left"
    echo "$name $f: done, left ${left:-nothing}" >&2
  done
  python3 - "$work/$name" $faults <<'PY'
import json, pathlib, sys
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
    reason, kind = r.get("reason", ""), (r.get("failure") or {}).get("kind")
    if r["status"] != "failed":
        return f"**{r['status']}** (expected failed)"
    if kind == "deadline":
        out = "deadline; " + ("stopped role named" if "(stopped" in reason else "**stopped role not named**")
    elif "was not answering" in reason:
        out = "failed; peer gave up on it, stopped role named"
    elif kind == "killed":
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
print()
PY
done
