#!/usr/bin/env bash
# The work per node of a fully loaded device: each benchmark of matrix.sh
# run as 16 one-rank jobs at once (udp native, as the matrix's 1-rank
# cells), three rounds, against one such job alone. Raw JSON lines into
# OUT/load.jsonl, each with "copies" (1 or 16) added. Usage (repository
# root, on the device, binaries in devbin/): load.sh OUT
set -uo pipefail
out=${1:?usage: load.sh OUT}
here=$(dirname "${BASH_SOURCE[0]}")
. "$here/matrix.sh"
bins=devbin
export UAT_LAUNCHER=$bins/cargo-uat
mkdir -p "$out"
one() { # copies bench...
  local copies=$1; shift
  # shellcheck disable=SC2086
  scripts/run.sh --no-build --conduit udp --fad native -n 1 --timeout 120 -- "$bins/udp-native/$1" "${@:2}" 2>/dev/null \
    | tail -1 | sed "s/^{/{\"copies\":$copies,/"
}
for round in 1 2 3; do
  for b in "${benches[@]}"; do
    # shellcheck disable=SC2086
    one 1 $b >>"$out/load.jsonl"
    for i in $(seq 16); do
      # shellcheck disable=SC2086
      one 16 $b >"$out/copy-$i.json" &
    done
    wait
    cat "$out"/copy-*.json >>"$out/load.jsonl"
    rm -f "$out"/copy-*.json
    echo "round $round: $b" >&2
  done
done
