#!/usr/bin/env python3
"""Measured (DIR/runs.jsonl) against predicted (DIR/predictions.jsonl, blind;
DIR/post-hoc.jsonl, from the measured machine's own costs, if present): per
cell (conduit, bench, fad, ranks, delay) the median [min-max] of the rounds,
and the model's error on time, steals and msg_handling_s. With --gates, the
validation's bounds (time within 15% of the median, steals within 50%,
msg_handling_s within 30%) are checked on the blind predictions of the cells
with more than one rank, and the exit status says whether all held.
Usage: compare.py [--gates] [DIR]"""
import json, os, statistics, sys

args = [a for a in sys.argv[1:] if a != "--gates"]
gates = "--gates" in sys.argv[1:]
d = args[0] if args else os.path.dirname(os.path.abspath(__file__))

def key(conduit, bench, fad, ranks, delay):
    return (conduit, bench, fad, int(ranks), round(float(delay), 3))

meas = {}
for line in open(os.path.join(d, "runs.jsonl")):
    j = json.loads(line)
    assert j["verified"], line
    s = j["stats"]
    k = key(j["conduit"], j["bench"], j["fad"], j["ranks"], j["net_delay_us"])
    meas.setdefault(k, []).append((j["time_s"], s["steals_succeeded"], s["msg_handling_s"]))

def preds(name):
    p = os.path.join(d, name)
    if not os.path.exists(p):
        return {}
    out = {}
    for line in open(p):
        j = json.loads(line)
        out[key(j["conduit"], j["bench"], j["fad"], j["ranks"], j["net_delay_us"])] = j
    return out

blind, post = preds("predictions.jsonl"), preds("post-hoc.jsonl")

def med(xs):
    return statistics.median(xs)

def err(p, m):
    return f"{(p / m - 1) * 100:+.0f}%" if m > 0 else "–"

failures = []
print("| conduit | bench | fad | ranks | delay µs | time s measured | time blind (err) | time post-hoc (err) | steals measured | steals blind | steals post-hoc | msg_handling_s measured | blind | post-hoc |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for k in sorted(meas):
    rows = meas[k]
    t = [r[0] for r in rows]; st = [r[1] for r in rows]; mh = [r[2] for r in rows]
    b, p = blind.get(k), post.get(k)
    cell = lambda x, f: f"{med(x):{f}} [{min(x):{f}}–{max(x):{f}}]"
    def pc(pr, field, m, f=".3f"):
        if not pr:
            return "–"
        return f"{pr[field]:{f}} ({err(pr[field], m)})"
    if gates and b and k[3] > 1:
        for field, m, bound in [("time_s", med(t), 0.15), ("steals_succeeded", med(st), 0.5), ("msg_handling_s", med(mh), 0.3)]:
            if m > 0 and abs(b[field] / m - 1) > bound:
                failures.append(f"{k}: {field} {b[field]:.4g} against {m:.4g} (bound {bound:.0%})")
    print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {k[4]:g} | {cell(t, '.3f')} | {pc(b, 'time_s', med(t))} | {pc(p, 'time_s', med(t))} | "
          f"{cell(st, 'd')} | {b['steals_succeeded'] if b else '–'} | {p['steals_succeeded'] if p else '–'} | "
          f"{cell(mh, '.3f')} | {pc(b, 'msg_handling_s', med(mh))} | {pc(p, 'msg_handling_s', med(mh))} |")
if gates:
    print()
    print(f"gates: {len(failures)} of the bounds failed" if failures else "gates: every bound held")
    for f in failures:
        print("-", f)
    sys.exit(1 if failures else 0)
