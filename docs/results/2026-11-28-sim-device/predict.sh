#!/usr/bin/env bash
# Blind predictions for device.sh's matrix from this machine's calibrated
# costs (sim/machines/here.toml, conduit udp), one JSON line per cell.
# Usage (repository root): docs/results/2026-11-28-sim-device/predict.sh > predictions.jsonl
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
. "$here/matrix.sh"
sim=${UAT_SIM:-target/sim/release/uat-sim}
machine=${MACHINE:-sim/machines/here.toml}
for b in "${benches[@]}"; do
  for fad in "${fads[@]}"; do
    for c in "${configs[@]}"; do
      read -r n h d <<<"$c"
      # The runtime's defaults: lifelines on (W = 8), random victims.
      # shellcheck disable=SC2086
      "$sim" predict --machine "$machine" --conduit udp --ranks "$n" --ranks-per-host $(( (n + h - 1) / h )) \
        --fad "$fad" --lifeline-w 8 --net-delay-us "$d" -- $b
    done
  done
done
