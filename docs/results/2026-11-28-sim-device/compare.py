#!/usr/bin/env python3
"""Measured (runs.jsonl, device) against predicted (predictions.jsonl, blind;
post-hoc.jsonl, from the device's own costs, if present): per cell the median
[min-max] of the three rounds, and the model's error on time, steals and
msg_handling_s. Usage: compare.py [DIR]"""
import json, os, statistics, sys

d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))

def key(bench, fad, ranks, delay):
    return (bench, fad, int(ranks), round(float(delay), 3))

meas = {}
for line in open(os.path.join(d, "runs.jsonl")):
    j = json.loads(line)
    assert j["verified"], line
    s = j["stats"]
    k = key(j["bench"], j["fad"], j["ranks"], j["net_delay_us"])
    meas.setdefault(k, []).append((j["time_s"], s["steals_succeeded"], s["msg_handling_s"]))

def preds(name):
    p = os.path.join(d, name)
    if not os.path.exists(p):
        return {}
    out = {}
    for line in open(p):
        j = json.loads(line)
        out[key(j["bench"], j["fad"], j["ranks"], j["net_delay_us"])] = j
    return out

blind, post = preds("predictions.jsonl"), preds("post-hoc.jsonl")

def med(xs):
    return statistics.median(xs)

def err(p, m):
    return f"{(p / m - 1) * 100:+.0f}%" if m > 0 else "–"

print("| bench | fad | ranks | delay µs | time s measured | time blind (err) | time post-hoc (err) | steals measured | steals blind | steals post-hoc | msg_handling_s measured | blind | post-hoc |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for k in sorted(meas):
    rows = meas[k]
    t = [r[0] for r in rows]; st = [r[1] for r in rows]; mh = [r[2] for r in rows]
    b, p = blind.get(k), post.get(k)
    cell = lambda x, f: f"{med(x):{f}} [{min(x):{f}}–{max(x):{f}}]"
    def pc(pr, field, m, f=".3f"):
        if not pr:
            return "–"
        return f"{pr[field]:{f}} ({err(pr[field], m)})"
    print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]:g} | {cell(t, '.3f')} | {pc(b, 'time_s', med(t))} | {pc(p, 'time_s', med(t))} | "
          f"{cell(st, 'd')} | {b['steals_succeeded'] if b else '–'} | {p['steals_succeeded'] if p else '–'} | "
          f"{cell(mh, '.3f')} | {pc(b, 'msg_handling_s', med(mh))} | {pc(p, 'msg_handling_s', med(mh))} |")
