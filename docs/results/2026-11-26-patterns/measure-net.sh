#!/usr/bin/env bash
# Patterns across the network, the software cache on and off: 2 ranks over
# real UDP and over mpi without shared memory (GASNET_SUPERNODE_MAXSIZE=1),
# REPS alternating rounds of each op. Appends one JSON line per run, with
# its label, to OUT (default net.jsonl here). Needs the udp-native and
# mpi-native variants built (cargo uat build --release --conduit udp|mpi).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${1:-$here/net.jsonl}
reps=${REPS:-3}
n=${N:-4194304}
for rep in $(seq "$reps"); do
  for op in for-each-mut map-reduce scan sort; do
    for path in udp mpi; do
      for cache in on off; do
        if [ "$path" = udp ]; then
          flags=(--conduit udp --real-udp); env=()
        else
          flags=(--conduit mpi); env=(GASNET_SUPERNODE_MAXSIZE=1)
        fi
        line=$(env "${env[@]}" UAT_CACHE=$cache "$root/scripts/run.sh" --no-build "${flags[@]}" -n 2 \
               -- patterns --op "$op" -n "$n" 2>/dev/null | grep '^{' | tail -1) || true
        echo "{\"label\":\"$path $op cache=$cache\",\"rep\":$rep,\"run\":${line:-null}}" >>"$out"
      done
    done
  done
done
