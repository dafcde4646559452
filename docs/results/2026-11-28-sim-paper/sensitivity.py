#!/usr/bin/env python3
"""The table of sensitivity.jsonl: for each declared cost at x0.5 and x1.5,
the 1,800-rank time and the efficiency 225 -> 1,800 (T225 x 225 / (T1800 x
1800)), against the declared costs; sorted by how far the efficiency or the
time moves. Usage: sensitivity.py [sensitivity.jsonl]"""
import json, os, sys

path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "sensitivity.jsonl")
cells = {}
for line in open(path):
    j = json.loads(line)
    change = tuple(sorted(j.get("changed_costs", {}).items()))
    cells.setdefault(change, {})[j["ranks"]] = j

def eff(c):
    return c[225]["time_s"] * 225 / (c[1800]["time_s"] * 1800)

base = cells[()]
b_eff, b_t = eff(base), base[1800]["time_s"]
rows = []
for change, c in cells.items():
    if not change or 225 not in c or 1800 not in c:
        continue
    (name, how), = change
    rows.append((name, how, eff(c), c[1800]["time_s"], c[1800]["handler_share"]))
print(f"declared: efficiency {b_eff:.1%}, time at 1,800 {b_t:.2f} s, handler share {base[1800]['handler_share']:.1%}")
print()
print("| cost | change | efficiency 225 → 1,800 | time at 1,800 (vs declared) | handler share |")
print("|---|---|---|---|---|")
rows.sort(key=lambda r: -max(abs(r[2] - b_eff), abs(r[3] / b_t - 1)))
for name, how, e, t, share in rows:
    print(f"| `{name}` | {how} | {e:.1%} | {t:.2f} s ({t / b_t - 1:+.0%}) | {share:.1%} |")
