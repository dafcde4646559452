#!/usr/bin/env bash
# Which growth of the empty poll with the number of peers would give the
# paper's AM efficiency (47% at 1,800 against 225 cores, BTC, empty check
# off): the AM cells of paper-btc.sh with poll_per_peer_ns set to each K.
# Usage (repository root): per-peer.sh > per-peer.jsonl
set -euo pipefail
sim=${UAT_SIM:-target/sim/release/uat-sim}
for k in 0 0.05 0.1 0.15; do
  for ranks in 225 1800; do
    "$sim" predict --machine sim/machines/tsubame25.toml --ranks "$ranks" --fad am --empty-check off \
      --steal-protocol paper --set "conduit.ibv.poll_per_peer_ns=$k" -- btc --depth 41
  done
done
