#!/usr/bin/env bash
# Sleeping ranks serving their memory: the cache-off patterns at full size
# (tests/pattern.rs's sizes) with lifelines on and off, and the idle ranks'
# CPU while nobody touches their memory (micro idle, as
# ../2026-11-26-network-lifelines/measure.sh), over udp --real-udp and mpi
# without shared memory, 2 ranks, on/off interleaved. Run from the
# repository root with udp-native and mpi-native built.
#   docs/results/2026-11-27-sleep-serve/measure.sh OUT [REPS]
set -uo pipefail
out=${1:?OUT}; reps=${2:-3}
mkdir -p "$out"
job() { # CONDUIT LIFELINES PROGRAM ARGS... (conduit: udp | mpi)
  local c=$1 l=$2; shift 2
  local args=(--no-build --conduit "$c" --fad native -n 2)
  local env=()
  if [ "$c" = udp ]; then args+=(--real-udp); else env=(GASNET_SUPERNODE_MAXSIZE=1); fi
  env "${env[@]}" UAT_LIFELINES="$l" UAT_VERBOSE=on scripts/run.sh "${args[@]}" -- "$@"
}
for rep in $(seq "$reps"); do
  for c in udp mpi; do
    for l in on off; do
      t0=$EPOCHREALTIME
      log=$(UAT_CACHE=off job "$c" "$l" "target/$c-native/release/examples/patterns" --max-n 4099 --small-max-n 4099 2>&1)
      wall=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
      ok=$(grep -c '"ok":true' <<<"$log")
      asked=$(grep -o '"keep_polling_asked":[0-9]*' <<<"$log" | head -1 | cut -d: -f2)
      echo "{\"what\":\"patterns-cache-off\",\"conduit\":\"$c\",\"lifelines\":\"$l\",\"rep\":$rep,\"wall_s\":$wall,\"ok\":$ok,\"keep_polling_asked\":${asked:-null}}" | tee -a "$out/patterns.jsonl"
      line=$(job "$c" "$l" "target/$c-native/release/micro" idle --serial-ms 1000 --depth 20 2>/dev/null | tail -n 1)
      echo "{\"what\":\"idle\",\"conduit\":\"$c\",\"lifelines\":\"$l\",\"rep\":$rep,\"micro\":$line}" >>"$out/idle.jsonl"
    done
  done
done
