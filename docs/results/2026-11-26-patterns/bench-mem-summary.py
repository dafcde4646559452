#!/usr/bin/env python3
"""Medians per label of runs.jsonl (bench-mem-measure.sh) as a Markdown table."""
import json, statistics, sys, collections
path = sys.argv[1] if len(sys.argv) > 1 else "docs/results/2026-11-26-patterns/runs.jsonl"
groups = collections.OrderedDict()
for line in open(path):
    r = json.loads(line)
    groups.setdefault(r["label"], []).append(r["run"])
keys = ["time_s", "iters_s", "build_s", "traverse_s", "free_s", "fetched_bytes", "written_bytes", "hit_rate"]
print("| label | runs | verified | " + " | ".join(k + " (median)" for k in keys) + " | steals (median) |")
print("|---" * (len(keys) + 4) + "|")
for label, runs in groups.items():
    cells = []
    for k in keys:
        v = [r[k] for r in runs if r.get(k) is not None]
        cells.append("" if not v else f"{statistics.median(v):.4g}")
    ok = all(r["verified"] is True for r in runs)
    steals = statistics.median(r["stats"]["steals_succeeded"] for r in runs)
    print(f"| {label} | {len(runs)} | {ok} | " + " | ".join(cells) + f" | {steals:g} |")
