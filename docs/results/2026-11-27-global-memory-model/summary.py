#!/usr/bin/env python3
"""Tables of quiet.sh's lines: per program and build, the cache's win
(off / on, per repetition) and per program and cache, this build against
the one before (new / old). Medians with min-max over repetitions."""
import json
import statistics
import sys
from collections import defaultdict

t = defaultdict(dict)  # (prog, build, cache) -> rep -> seconds
for line in open(sys.argv[1]):
    x = json.loads(line)
    run = x["run"] or {}
    if x["prog"] == "examples/global_memory":
        ok = run.get("sum_ok") and run.get("max_ok") and run.get("leaves_ok") and run.get("big_ok")
        s = x["wall_s"] if ok else None
    else:
        s = run.get("time_s") if run.get("verified") else None
    if s is None:
        sys.exit(f"a run failed or did not verify: {line.strip()}")
    t[(x["prog"], x["build"], x["cache"])][x["rep"]] = s


def cell(v):
    return f"{statistics.median(v):.2f}× ({min(v):.2f}–{max(v):.2f})"


progs = sorted({k[0] for k in t})
print("| program | build | on s | off s | off / on |")
print("|---|---|---|---|---|")
for p in progs:
    for b in ["old", "new"]:
        on, off = t[(p, b, "on")], t[(p, b, "off")]
        reps = sorted(set(on) & set(off))
        print(f"| {p} | {b} | {statistics.median(on.values()):.3f} | {statistics.median(off.values()):.3f} | "
              f"{cell([off[r] / on[r] for r in reps])} |")
print()
print("| program | cache | new / old |")
print("|---|---|---|")
for p in progs:
    for c in ["on", "off"]:
        old, new = t[(p, "old", c)], t[(p, "new", c)]
        reps = sorted(set(old) & set(new))
        print(f"| {p} | {c} | {cell([new[r] / old[r] for r in reps])} |")
