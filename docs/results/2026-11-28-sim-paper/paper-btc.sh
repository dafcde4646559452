#!/usr/bin/env bash
# BTC at the paper's size (depth 41, 4,398 G tasks) on TSUBAME2.5's declared
# costs (sim/machines/tsubame25.toml), the paper's deque protocol (THE with
# its lock), 225 and 1,800 ranks, RDMA-emulated and AM, empty check on and
# off: Table 4's and Fig. 14's BTC cells. One JSON line per cell.
# Usage (repository root): paper-btc.sh > paper-btc.jsonl
set -euo pipefail
sim=${UAT_SIM:-target/sim/release/uat-sim}
for ranks in 225 1800; do
  for fad in rdma-emulated am; do
    for ec in on off; do
      "$sim" predict --machine sim/machines/tsubame25.toml --ranks "$ranks" --fad "$fad" --empty-check "$ec" \
        --steal-protocol paper "$@" -- btc --depth 41
    done
  done
done
