#!/usr/bin/env python3
"""Each result's figures in each receive mode, read from a results file (the JSON, not what the
run printed): a line per result and mode, `case library mode figure`: its rate (a round trip's
with its p50 and p99). The bench scripts print these beside their bare loops' lines.

usage: scripts/figures.py RESULTS.json [PREFIX]
"""
import json
import sys


def figure(pattern, median):
    rate = median["msgs_per_s"] / 1e6
    if pattern == "stream-rtt" and median.get("p50_ns") is not None:
        p99 = median.get("p99_ns")
        tail = " p99 %.0f ns" % p99 if p99 is not None else ""
        return "%.3f M round trips/s, p50 %.0f ns%s" % (rate, median["p50_ns"], tail)
    return "%.3f M msg/s" % rate


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[-1])
    prefix = sys.argv[2] if len(sys.argv) == 3 else ""
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    for r in doc["results"]:
        if r["status"] != "ok":
            print("%s%s %s %s: %s" % (prefix, r["case"], r["library"], r["status"], r.get("reason") or ""))
            continue
        for m in r.get("modes", []):
            if m.get("median"):
                print("%s%s %s %s %s" % (prefix, r["case"], r["library"], m["mode"], figure(r["pattern"], m["median"])))


main()
