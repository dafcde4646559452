#!/usr/bin/env bash
# vs.sh ROUNDS DIR... -- PROGRAM ARGS
# Runs PROGRAM (uts, nqueens or btc) from each build directory DIR with
# --vs-seq ROUNDS on one rank, pinned to core 1, twice over (two passes,
# the builds interleaved), and prints each run's fastest parallel and serial
# times, their ratio and the median of the rounds' ratios.
set -euo pipefail
r=$1; shift; dirs=()
while [ "$1" != "--" ]; do dirs+=("$1"); shift; done; shift
prog=$1; shift
for pass in 1 2; do
  for d in "${dirs[@]}"; do
    GASNET_PSHM_NODES=1 taskset -c 1 "$d/$prog" "$@" --vs-seq "$r" | tail -n 1 | python3 -c "
import json, sys
d = json.loads(sys.stdin.read()); v = d['vs_seq']
print('%-10s pass $pass par_min %.4f seq_min %.4f ratio %.3f median %.3f verified %s'
      % ('$(basename "$d")', d['time_s'], v['seq_time_s'], v['ratio'], v['ratio_median'], d['verified']))"
  done
done
