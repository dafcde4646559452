#!/bin/bash
# usage: ab.sh REPS BIN_A BIN_B ARGS... -> per-rep times of A, B, A --seq; medians
reps=$1; A=$2; B=$3; shift 3
t() { GASNET_PSHM_NODES=1 taskset -c 1 "$@" 2>/dev/null | grep -o '"time_s":[0-9.e-]*' | cut -d: -f2; }
for i in $(seq $reps); do
  echo "$(t $A "$@") $(t $B "$@") $(t $A "$@" --seq)"
done | python3 -c "
import sys,statistics as st
r=[list(map(float,l.split())) for l in sys.stdin]
print('A/seq %.3f  B/seq %.3f  B/A %.3f (%.3f-%.3f)'%(st.median([a/s for a,b,s in r]),st.median([b/s for a,b,s in r]),st.median([b/a for a,b,s in r]),min(b/a for a,b,s in r),max(b/a for a,b,s in r)))
"
