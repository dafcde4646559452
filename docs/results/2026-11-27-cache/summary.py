#!/usr/bin/env python3
"""The cache table from runs.jsonl: per conduit and benchmark, the median
time_s (min-max) with the cache on and off, and the median of the paired
ratios off/on (above 1: the cache is faster)."""
import json, statistics, sys
from collections import defaultdict
runs = defaultdict(dict)
for l in open(sys.argv[1] if len(sys.argv) > 1 else "runs.jsonl"):
    x = json.loads(l)
    r = x["run"]
    t = r["time_s"] if r and r.get("verified", True) is not False else None
    runs[(x["conduit"], x["bench"])].setdefault(x["rep"], {})[x["cache"]] = t
print("| conduit | benchmark | pairs | on: time_s median (min–max) | off: time_s median (min–max) | off/on (median of pairs, min–max) |")
print("|---|---|---|---|---|---|")
def fmt(v):
    return f"{statistics.median(v):.3f} ({min(v):.3f}–{max(v):.3f})" if v else "–"
for (conduit, bench), reps in runs.items():
    pairs = [(p["on"], p["off"]) for p in reps.values() if p.get("on") and p.get("off")]
    on = [a for a, _ in pairs]; off = [b for _, b in pairs]
    ratio = [b / a for a, b in pairs]
    rs = f"**{statistics.median(ratio):.2f}×** ({min(ratio):.2f}–{max(ratio):.2f})" if ratio else "–"
    print(f"| {conduit} | {bench} | {len(pairs)} | {fmt(on)} | {fmt(off)} | {rs} |")
