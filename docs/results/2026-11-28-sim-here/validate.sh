#!/usr/bin/env bash
# The simulator against real jobs on this machine, in both regimes its
# network has: smp (shared memory) and udp over real UDP (RMA and atomics
# served by Active Messages at the target's poll); 2 ranks; native and am;
# BTC, UTS T1 and NQueens on inputs not used for calibration (uat-sim
# calibrate used btc --depth 20, uts -d 9, nqueens 11). Three interleaved
# rounds of real jobs into OUT/runs.jsonl, then the predictions from
# sim/machines/here.toml into OUT/predictions.jsonl; compare with
# docs/results/2026-11-28-sim-device/compare.py --gates OUT.
# Usage (repository root, nothing else running): validate.sh OUT
# (PREDICT_ONLY=1: only the predictions, the real runs kept.)
set -euo pipefail
out=${1:?usage: validate.sh OUT}
mkdir -p "$out"
sim=${UAT_SIM:-target/sim/release/uat-sim}
benches=("btc --depth 22" "uts -t 1 -b 4 -r 19 -a 3 -d 10" "nqueens 12")
: "${PREDICT_ONLY:=0}"
[ "$PREDICT_ONLY" = 1 ] || : >"$out/runs.jsonl"
for round in 1 2 3; do
  [ "$PREDICT_ONLY" = 1 ] && break
  for b in "${benches[@]}"; do
    for fad in native am; do
      for conduit in smp udp; do
        apart=(); [ "$conduit" = udp ] && apart=(--real-udp)
        echo "round $round: $conduit $fad $b" >&2
        # shellcheck disable=SC2086
        scripts/run.sh --no-build --conduit "$conduit" --fad "$fad" "${apart[@]}" -n 2 --timeout 120 \
          -- "target/$conduit-$fad/release/${b%% *}" ${b#* } 2>/dev/null | tail -1 >>"$out/runs.jsonl"
      done
    done
  done
done
: >"$out/predictions.jsonl"
for b in "${benches[@]}"; do
  for fad in native am; do
    for conduit in smp udp; do
      rph=2; [ "$conduit" = udp ] && rph=1
      # shellcheck disable=SC2086
      "$sim" predict --machine sim/machines/here.toml --conduit "$conduit" --ranks 2 --ranks-per-host "$rph" \
        --fad "$fad" --lifeline-w 8 -- $b >>"$out/predictions.jsonl"
    done
  done
done
