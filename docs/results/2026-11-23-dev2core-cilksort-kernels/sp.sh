#!/bin/bash
# sp.sh REPS N: cilksort 2 ranks over 1 rank on smp (scripts/run.sh), alternating, seeds 21..
reps=$1; n=$2
cd "$(dirname "$0")/../../.."
for r in $(seq $reps); do
  for k in 1 2; do
    t=$(scripts/run.sh -n $k -- cilksort -n $n --seed $((20+r)) 2>/dev/null | python3 -c 'import json,sys; d=json.loads(sys.stdin.read().strip().splitlines()[-1]); assert d["verified"]; print(d["time_s"])')
    echo "$k $t"
  done
done | python3 -c '
import sys,statistics as st,collections
d=collections.defaultdict(list)
for l in sys.stdin:
  k,t=l.split(); d[k].append(float(t))
print("1 rank %.4f  2 ranks %.4f  speedup %.2f (pairs %s)"%(st.median(d["1"]),st.median(d["2"]),st.median(d["1"])/st.median(d["2"]), " ".join("%.2f"%(a/b) for a,b in zip(d["1"],d["2"]))))
'
