#!/usr/bin/env python3
"""pairs.txt -> the table: case, ranks, ours, rayon, ratio median [min-max]
(medians of sort_s; the ratio of each round's pair)."""
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    case, ranks, side, t = line.strip().split("|")
    rows.setdefault((case, int(ranks)), {"ours": [], "rayon": []})[side].append(float(t))
print("| case | ranks | ours sort_s | rayon sort_s | ratio median [min-max] |")
print("|---|---|---|---|---|")
for (case, ranks), v in rows.items():
    r = [a / b for a, b in zip(v["ours"], v["rayon"])]
    print(f"| {case} | {ranks} | {statistics.median(v['ours']):.3f} | {statistics.median(v['rayon']):.3f} | "
          f"{statistics.median(r):.2f} [{min(r):.2f}-{max(r):.2f}] |")
