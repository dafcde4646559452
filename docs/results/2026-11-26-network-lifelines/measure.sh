#!/usr/bin/env bash
# Issue 36's measurements: idle ranks across the network (micro idle) and
# one steal over real UDP before/after. Run from the repository root with
# the variants built (cargo uat build --release --conduit smp|udp|mpi --fad
# native); BASE is a directory holding the previous commit's udp-native
# micro (for the steal comparison), optional.
#   docs/results/2026-11-26-network-lifelines/measure.sh OUT [BASE_MICRO]
set -uo pipefail
out=${1:?OUT}; base=${2:-}
mkdir -p "$out"
idle() { # CONDUIT-LABEL RANKS LIFELINES LAUNCHER-ARGS... (env via IDLE_ENV)
  local label=$1 n=$2 l=$3; shift 3
  local t0=$EPOCHREALTIME
  local line
  line=$(env ${IDLE_ENV:-} UAT_LIFELINES="$l" /usr/bin/time -f '%U %S' -o "$out/time.tmp" \
    scripts/run.sh --no-build "$@" -n "$n" -- micro idle --serial-ms 1000 --depth 20 2>/dev/null | tail -n 1)
  local wall; wall=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
  local cpu; cpu=$(awk '{ printf "%.3f", $1 + $2 }' "$out/time.tmp")
  echo "{\"conduit\":\"$label\",\"ranks\":$n,\"lifelines\":\"$l\",\"job_cpu_s\":$cpu,\"job_wall_s\":$wall,\"micro\":$line}" >>"$out/idle.jsonl"
}
for rep in 1 2 3; do
  for n in 2 4; do
    for l in on off; do
      idle smp "$n" "$l" --conduit smp
      idle "udp --real-udp" "$n" "$l" --conduit udp --real-udp
      IDLE_ENV="GASNET_SUPERNODE_MAXSIZE=1" idle "mpi no-pshm" "$n" "$l" --conduit mpi
    done
  done
done
if [ -n "$base" ]; then
  for rep in 1 2 3 4 5; do
    for which in base new; do
      prog=micro; [ "$which" = base ] && prog=$base
      line=$(scripts/run.sh --no-build --conduit udp --real-udp -n 2 -- "$prog" steal 2>/dev/null | tail -n 1)
      echo "{\"which\":\"$which\",\"micro\":$line}" >>"$out/steal.jsonl"
    done
  done
fi
