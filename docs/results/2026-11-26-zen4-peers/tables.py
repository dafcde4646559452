#!/usr/bin/env python3
"""tables.py DIR: the Markdown tables of README.md from DIR/peers.jsonl and
DIR/vs.jsonl (written by measure.sh). Every line must be verified."""
import json, statistics, sys
from pathlib import Path

d = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
cells = {}
for l in open(d / "peers.jsonl"):
    r = json.loads(l)
    x = r["line"]
    assert x["verified"] is True, l
    t = x["sort_s"] if x["bench"] == "cilksort" else x["time_s"]
    cells.setdefault((r["workload"], r["threads"]), {}).setdefault(r["system"], []).append((r["rep"], t))

print("| workload | threads | ours median (min–max) s | rayon median (min–max) s | ours / rayon, median of pairs (min–max) | reps |")
print("|---|---:|---:|---:|---:|---:|")
order = ["uts", "nqueens", "btc", "btc-join", "cilksort"]
for (w, n) in sorted(cells, key=lambda k: (order.index(k[0]), k[1])):
    c = cells[(w, n)]
    ours, ray = dict(c["uat"]), dict(c["rayon"])
    pairs = sorted(ours[k] / ray[k] for k in ours if k in ray)
    f = lambda v: f"{statistics.median(v):.4f} ({min(v):.3f}–{max(v):.3f})"
    print(f"| {w} | {n} | {f(list(ours.values()))} | {f(list(ray.values()))} | "
          f"{statistics.median(pairs):.3f} ({pairs[0]:.3f}–{pairs[-1]:.3f}) | {len(pairs)} |")

print()
vs = {}
for l in open(d / "vs.jsonl"):
    r = json.loads(l)
    x = r["line"]
    assert x["verified"] is True, l
    vs.setdefault((r["workload"], r["system"]), []).append(x["vs_seq"])
systems = ["uat", "rayon", "frame", "call"]
names = {"uat": "ours", "rayon": "rayon (1 thread)", "frame": "frame model", "call": "call model"}
print("| workload | " + " | ".join(names[s] for s in systems) + " |")
print("|---|" + "---:|" * len(systems))
for w in ["uts", "nqueens", "btc", "btc-join"]:
    row = []
    for s in systems:
        v = vs.get((w, s), [])
        row.append(" / ".join(f"{x['ratio']:.3f} (med {x['ratio_median']:.3f})" for x in v) or "–")
    print(f"| {w} | " + " | ".join(row) + " |")
