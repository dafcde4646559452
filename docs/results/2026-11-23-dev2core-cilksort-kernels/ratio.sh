#!/bin/bash
# ratio.sh REPS N OLD_BIN NEW_BIN: one rank pinned to core 1; per round (seed
# 10+r) the baseline (NEW --sort-unstable), OLD and NEW cilksort; prints the
# medians and the medians of the per-round ratios with their range.
reps=$1; n=$2; old=$3; new=$4
t() { GASNET_PSHM_NODES=1 taskset -c 1 "$@" | python3 -c 'import json,sys; d=json.loads(sys.stdin.read().strip().splitlines()[-1]); assert d["verified"]; print(d["time_s"])'; }
for r in $(seq $reps); do
  echo "$(t $new -n $n --seed $((10+r)) --sort-unstable) $(t $old -n $n --seed $((10+r))) $(t $new -n $n --seed $((10+r)))"
done | python3 -c '
import sys,statistics as st
rows=[list(map(float,l.split())) for l in sys.stdin]
b,o,n=zip(*rows)
def rr(xs,ys):
  r=[x/y for x,y in zip(xs,ys)]; return "%.2f (%.2f-%.2f)"%(st.median(r),min(r),max(r))
print("n='"$n"' base %.4f old %.4f new %.4f | old/base %s | new/base %s | new/old %s"%(st.median(b),st.median(o),st.median(n),rr(o,b),rr(n,b),rr(n,o)))
'
