#!/usr/bin/env bash
# Which declared cost moves the 1,800-rank result most: each of
# tsubame25.toml's costs at x0.5 and x1.5, BTC, AM, empty check off, the
# paper's protocol, 225 and 1,800 ranks (efficiency = T225 x 225 / (T1800 x
# 1800)). Depth 34 (the time scales with the tree; the efficiency is what
# is compared). MACHINE and CONDUIT choose another machine file (this
# machine's: MACHINE=sim/machines/here.toml CONDUIT=udp).
# Usage (repository root): sensitivity.sh > sensitivity.jsonl
set -euo pipefail
sim=${UAT_SIM:-target/sim/release/uat-sim}
machine=${MACHINE:-sim/machines/tsubame25.toml}
conduit=${CONDUIT:-ibv}
run() {
  for ranks in 225 1800; do
    "$sim" predict --machine "$machine" --conduit "$conduit" --ranks "$ranks" --fad am --empty-check off --steal-protocol paper "$@" -- btc --depth 34
  done
}
run
for cost in $("$sim" check-machine "$machine" | sed 's/ = .*//' | grep -v '^layout\.' \
  | grep -E "^(local|work)\.|^conduit\.$conduit\."); do
  for f in 0.5 1.5; do run --scale "$cost=$f"; done
done
