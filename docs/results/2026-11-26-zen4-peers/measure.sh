#!/usr/bin/env bash
# measure.sh peers BIN REPS OUT   ours (uat, smp/native) against rayon in the
#   same binaries at 1 and 2 ranks/threads; each repetition runs every
#   workload, count and system once (a noisy phase of the host hits all).
# measure.sh vs BIN ROUNDS PASSES OUT   one rank against the serial elision,
#   paired in one process (--vs-seq ROUNDS): ours, rayon (1 thread) and the
#   two no-runtime child models, interleaved, PASSES times.
# Each run's JSON line is appended to OUT, tagged (JSON lines); a line per
# run on stderr.
set -euo pipefail
what=$1 bin=$2 count=$3
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
workloads=(
  "uts|uts -t 1 -a 3 -d 10 -b 4 -r 19"
  "nqueens|nqueens 15"
  "btc|btc --depth 24"
  "btc-join|btc --depth 24 --join"
)
run() { # RANKS PROGRAM ARGS...: the job's JSON line
  local n=$1 prog=$2; shift 2
  "$root/scripts/run.sh" --no-build -n "$n" -- "$bin/$prog" "$@" 2>/dev/null | tail -n 1
}
show() { grep -o "\"$1\":[0-9.a-z]*" <<<"$2" || true; }
case "$what" in
  peers)
    out=$4
    workloads+=("cilksort|cilksort -n 16777216")
    for ((r = 1; r <= count; r++)); do
      for w in "${workloads[@]}"; do
        name=${w%%|*} args=${w#*|}
        for n in 1 2; do
          for sys in uat rayon; do
            # shellcheck disable=SC2086
            if [ "$sys" = uat ]; then line=$(run "$n" $args); else line=$(run 1 $args --rayon "$n"); fi
            echo "{\"rep\":$r,\"workload\":\"$name\",\"threads\":$n,\"system\":\"$sys\",\"line\":$line}" >>"$out"
            echo "rep $r $name $sys $n: $(show time_s "$line") $(show sort_s "$line") $(show verified "$line")" >&2
          done
        done
      done
    done ;;
  vs)
    passes=$4 out=$5
    for ((p = 1; p <= passes; p++)); do
      for w in "${workloads[@]}"; do
        name=${w%%|*} args=${w#*|}
        for sys in uat "rayon:--rayon 1" "call:--model-child call" "frame:--model-child frame"; do
          label=${sys%%:*} extra=""
          [ "$sys" = uat ] || extra=${sys#*:}
          # shellcheck disable=SC2086
          line=$(run 1 $args $extra --vs-seq "$count")
          echo "{\"pass\":$p,\"workload\":\"$name\",\"system\":\"$label\",\"line\":$line}" >>"$out"
          echo "pass $p $name $label: $(show ratio "$line") $(show ratio_median "$line") $(show verified "$line")" >&2
        done
      done
    done ;;
  *) echo "measure.sh: want peers or vs (see the top of this file)" >&2; exit 2 ;;
esac
