#!/usr/bin/env python3
"""Issue 34's tables from measure.sh's output directory (Markdown on stdout)."""
import json, statistics, sys
from collections import defaultdict

out = sys.argv[1]
rows = lambda name: [json.loads(l) for l in open(f"{out}/{name}") if l.strip()]

print("## Spawn+join, tracing off, before and after (micro spawn, 1 rank, ns)\n")
spawn = defaultdict(list)
for r in rows("spawn.jsonl"):
    spawn[r["which"]].append(r["micro"]["spawn_join"]["ns"])
b, n = statistics.median(spawn["base"]), statistics.median(spawn["new"])
print(f"| | median | runs |\n|---|---|---|\n| before (53d7486) | {b:.2f} | {sorted(spawn['base'])} |\n| after | {n:.2f} | {sorted(spawn['new'])} |\n\nafter / before: {n / b:.3f}\n")

print("## Overhead against tracing off (median of the rounds' ratios of time_s)\n")
by = defaultdict(dict)
for r in rows("overhead.jsonl"):
    run = r["run"]
    assert run["verified"], run
    key = (run["bench"], r["ranks"])
    by[key].setdefault(r["mode"], []).append(run["time_s"])
print("| benchmark | ranks | off (s, median) | stats | timeline | work/span |\n|---|---|---|---|---|---|")
for (bench, ranks), modes in sorted(by.items()):
    off = modes["off"]
    ratio = lambda m: statistics.median(t / o for t, o in zip(modes[m], off))
    print(f"| {bench} | {ranks} | {statistics.median(off):.4f} | {ratio('stats'):.3f} | {ratio('timeline'):.3f} | {ratio('workspan'):.3f} |")

print("\n## Trace size (timeline mode)\n")
print("| benchmark | ranks | spawns | records | bytes of rank files | bytes per million spawns |\n|---|---|---|---|---|---|")
for r in rows("size.jsonl"):
    spawns = r["run"]["stats"]["spawns"]
    print(f"| {r['bench']} | {r['ranks']} | {spawns} | {r['records']} | {r['rank_file_bytes']} | {r['rank_file_bytes'] / spawns * 1e6:.0f} |")

print("\n## Clock alignment (the round trips' estimate of the offset where the truth is 0: one host)\n")
print("| conduit | ranks | rank | estimate (ns) | bound (ns) | within the bound |\n|---|---|---|---|---|---|")
for r in rows("clock.jsonl"):
    h = r["header"]
    if h["rank"] == 0:
        continue
    est, bound = h.get("clock_estimate_ns"), h.get("clock_estimate_error_ns")
    print(f"| {r['how'].replace('--conduit ', '')} | {r.get('ranks', 4)} | {h['rank']} | {est} | {bound} | {abs(est) <= bound} |")
