#!/usr/bin/env bash
# The cache on and off, the build before the change (OLD, a target dir of
# commit 2830a16 built with `cargo uat build --release --conduit udp --fad
# native`) against this one (NEW), 2 ranks over real UDP, interleaved:
# each repetition runs every (build, cache) pair of every program in turn,
# the order of builds alternating. One JSON line per run on stdout: the
# program's last JSON line, or for examples/global_memory.rs (which
# prints no time) the job's wall time.
# Usage: OLD=DIR NEW=DIR REPS=5 quiet.sh > runs.jsonl
set -u
reps=${REPS:-5}
progs=("heat --rows 1024 --cols 1024 --iters 50" "uts-mem -d 8" "cilksort -n 1048576" "examples/global_memory")
for ((r = 1; r <= reps; r++)); do
  builds="old new"; [ $((r % 2)) = 0 ] && builds="new old"
  for p in "${progs[@]}"; do
    set -- $p; prog=$1; shift
    for b in $builds; do
      dir=$OLD; [ "$b" = new ] && dir=$NEW
      for c in on off; do
        t0=$(date +%s.%N)
        line=$(UAT_CACHE=$c timeout 300 scripts/run.sh --no-build --conduit udp --fad native --real-udp -n 2 -- \
               "$dir/$prog" "$@" 2>/dev/null | grep '^{' | tail -1)
        t1=$(date +%s.%N)
        wall=$(printf %.3f "$(echo "$t1 - $t0" | bc)")
        echo "{\"rep\":$r,\"prog\":\"$prog\",\"build\":\"$b\",\"cache\":\"$c\",\"wall_s\":$wall,\"load\":\"$(cut -d' ' -f1 /proc/loadavg)\",\"run\":${line:-null}}"
      done
    done
  done
done
