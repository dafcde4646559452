#!/bin/bash
# ab.sh ROUNDS SEQ_BIN BIN... -- ARGS
# Each round: every BIN (parallel path), then SEQ_BIN --seq, all pinned to
# core 1 at one rank. Prints, per BIN, the median (min-max) of its time over
# SEQ_BIN's --seq time of the same round.
rounds=$1; seq_bin=$2; shift 2
bins=(); while [ "$1" != "--" ]; do bins+=("$1"); shift; done; shift
t() { GASNET_PSHM_NODES=1 taskset -c 1 "$@" 2>/dev/null | grep -o '"time_s":[0-9.e-]*' | cut -d: -f2; }
for _ in $(seq "$rounds"); do
  line=""
  for b in "${bins[@]}"; do line="$line $(t "$b" "$@")"; done
  echo "$line $(t "$seq_bin" "$@" --seq)"
done | python3 -c "
import sys, statistics as st
names = sys.argv[1:]
rows = [list(map(float, l.split())) for l in sys.stdin]
for i, n in enumerate(names):
    r = [x[i] / x[-1] for x in rows]
    print('%-28s %.3f (%.3f-%.3f)' % (n, st.median(r), min(r), max(r)))
print('%-28s %.3f s' % ('seq (median)', st.median(x[-1] for x in rows)))
" "${bins[@]}"
