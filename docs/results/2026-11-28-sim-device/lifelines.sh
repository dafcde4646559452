#!/usr/bin/env bash
# Is the native 16-rank gap the lifelines' sleep? udp native, 16 ranks on 4
# emulated hosts, UAT_LIFELINES on and off, the benchmarks of matrix.sh,
# three interleaved rounds; raw JSON lines into OUT/lifelines.jsonl. The
# predictions (lifelines-predictions.jsonl: uat-sim with --lifeline-w 8 and
# 0) were committed before it ran. Usage (repository root, on the device,
# binaries in devbin/): lifelines.sh OUT
set -uo pipefail
out=${1:?usage: lifelines.sh OUT}
here=$(dirname "${BASH_SOURCE[0]}")
. "$here/matrix.sh"
bins=devbin
export UAT_LAUNCHER=$bins/cargo-uat
mkdir -p "$out"
for round in 1 2 3; do
  for b in "${benches[@]}"; do
    for ll in on off; do
      # shellcheck disable=SC2086
      UAT_LIFELINES=$ll scripts/run.sh --no-build --conduit udp --fad native --hosts 4 -n 16 --timeout 120 \
        -- "$bins/udp-native/${b%% *}" ${b#* } 2>/dev/null | tail -1 >>"$out/lifelines.jsonl"
      echo "round $round: lifelines $ll $b" >&2
    done
  done
done
