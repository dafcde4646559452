#!/usr/bin/env bash
# Cache on against off, 2 ranks whose memory is apart: udp over real UDP
# and mpi without shared memory (GASNET_SUPERNODE_MAXSIZE=1). Interleaved
# pairs (the order alternates every repetition); one JSON line per run
# appended to runs.jsonl here. Usage (from the repository root):
#   REPS=5 CONDUITS="udp mpi" docs/results/2026-11-27-cache/measure.sh
# (FIRST=k REPS=m runs repetitions k..m only, to split a long measurement;
# OUT=FILE appends there instead)
set -u
here=docs/results/2026-11-27-cache
reps=${REPS:-5}
first=${FIRST:-1}
conduits=${CONDUITS:-udp mpi}
benches=${BENCHES:-heat uts-mem cilksort knapsack for-each-mut map-reduce scan histogram filter sort}
args_of() {
  case "$1" in
    heat) echo "heat --rows 1024 --cols 1024 --iters 50" ;;
    uts-mem) echo "uts-mem -d 8" ;;
    cilksort) echo "cilksort -n 1048576" ;;
    knapsack) echo "knapsack" ;;
    *) echo "patterns --op $1 -n 4194304" ;;
  esac
}
for conduit in $conduits; do
  case "$conduit" in
    udp) flags=(--real-udp) env=() ;;
    mpi) flags=() env=(GASNET_SUPERNODE_MAXSIZE=1) ;;
  esac
  for ((r = first; r <= reps; r++)); do
    order="on off"; [ $((r % 2)) = 0 ] && order="off on"
    for b in $benches; do
      # shellcheck disable=SC2046
      set -- $(args_of "$b")
      prog=$1; shift
      for c in $order; do
        line=$(env "${env[@]}" UAT_CACHE=$c timeout 300 scripts/run.sh --no-build --conduit "$conduit" --fad native "${flags[@]}" \
          -n 2 -- "target/$conduit-native/release/$prog" "$@" 2>/dev/null | grep '^{' | tail -1)
        echo "{\"conduit\":\"$conduit\",\"bench\":\"$b\",\"cache\":\"$c\",\"rep\":$r,\"load\":\"$(cut -d' ' -f1 /proc/loadavg)\",\"run\":${line:-null}}" >> "${OUT:-$here/runs.jsonl}"
      done
    done
  done
done
