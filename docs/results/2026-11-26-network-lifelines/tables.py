#!/usr/bin/env python3
"""Tables of measure.sh's output: python3 tables.py OUT"""
import json, statistics, sys
from collections import defaultdict
out = sys.argv[1]
rows = defaultdict(list)
for line in open(f"{out}/idle.jsonl"):
    r = json.loads(line)
    rows[(r["conduit"], r["ranks"], r["lifelines"])].append(r)
med = lambda xs: statistics.median(xs) if xs else float("nan")
print("| conduit | ranks | idle CPU s/s on | off | on/off | job CPU s/s on | off | on/off | asleep share on | first task after the serial second, max (ms) on | off |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for conduit in ["smp", "udp --real-udp", "mpi no-pshm"]:
    for n in [2, 4]:
        on, off = rows[(conduit, n, "on")], rows[(conduit, n, "off")]
        if not on or not off:
            continue
        idle = lambda rs: med([r["micro"]["idle_ranks_cpu_per_wall"] for r in rs])
        job = lambda rs: med([r["job_cpu_s"] / r["job_wall_s"] for r in rs])
        asleep = med([r["micro"]["idle_ranks_asleep_share"] for r in on])
        first = lambda rs: med([(r["micro"]["idle_ranks_first_task_max_us"] or float("nan")) / 1e3 for r in rs])
        ok = all(r["micro"]["verified"] for r in on + off)
        print(f"| {conduit} | {n} | {idle(on):.3f} | {idle(off):.3f} | {idle(on)/idle(off):.3f} | {job(on):.2f} | {job(off):.2f} | {job(on)/job(off):.2f} | {asleep:.3f} | {first(on):.2f} | {first(off):.2f} |{'' if ok else ' NOT VERIFIED'}")
try:
    steal = defaultdict(list)
    for line in open(f"{out}/steal.jsonl"):
        r = json.loads(line)
        steal[r["which"]].append(r["micro"])
    print()
    print("| one steal over real UDP | steal µs (median, min–max) | round trips per steal | attempts per steal |")
    print("|---|---:|---:|---:|")
    for w in ["base", "new"]:
        xs = [m["steal_ns"] / 1e3 for m in steal[w]]
        rt = med([m["round_trips_per_steal"] for m in steal[w]])
        at = med([m["attempts"] / m["steals"] for m in steal[w]])
        print(f"| {w} | {med(xs):.1f} ({min(xs):.1f}–{max(xs):.1f}) | {rt:.1f} | {at:.2f} |")
except FileNotFoundError:
    pass
