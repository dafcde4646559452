#!/usr/bin/env bash
# The device half of the simulator's scaled-regime check (run on the
# 16-core device, binaries carried in devbin/): the matrix of matrix.sh,
# three interleaved rounds, raw JSON lines into OUT/runs.jsonl; then the
# device's own costs (uat-sim calibrate) into OUT/device.toml, for the
# post-hoc comparison. Usage (repository root): device.sh OUT
set -uo pipefail
out=${1:?usage: device.sh OUT}
here=$(dirname "${BASH_SOURCE[0]}")
. "$here/matrix.sh"
bins=devbin
export UAT_LAUNCHER=$bins/cargo-uat
mkdir -p "$out"
{ nproc; lscpu | grep -E 'Model name|^CPU\(s\)|MHz'; uptime; } >"$out/machine.txt" 2>&1
for round in 1 2 3; do
  for b in "${benches[@]}"; do
    for fad in "${fads[@]}"; do
      for c in "${configs[@]}"; do
        read -r n h d <<<"$c"
        hosts=(); [ "$n" -gt 1 ] && hosts=(--hosts "$h")
        echo "round $round: $fad n=$n hosts=$h delay=${d}us $b" >&2
        # shellcheck disable=SC2086
        UAT_NET_DELAY=${d}us scripts/run.sh --no-build --conduit udp --fad "$fad" "${hosts[@]}" -n "$n" \
          --timeout 120 -- "$bins/udp-$fad/${b%% *}" ${b#* } 2>>"$out/stderr.txt" | tail -1 >>"$out/runs.jsonl"
      done
    done
  done
done
"$bins/uat-sim" calibrate --bin-dir "$bins/{conduit}-{fad}" --conduits smp,udp --reps 3 \
  --out "$out/device.toml" 2>>"$out/stderr.txt"
echo "device.sh: done" >&2
