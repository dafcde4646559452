#!/usr/bin/env bash
# Interleaved pairs: the library's sort (cilksort bench, RANKS ranks on
# smp) against rayon (--rayon RANKS) on 2^24 u64, for each input and
# order. Usage: pairs.sh ROUNDS. One line per run: case ranks side sort_s.
set -e
cd "$(dirname "$0")/../../.."
rounds=${1:-5}
bin=target/smp-native/release/cilksort
run() { scripts/run.sh --no-build --conduit smp --fad native -n "$1" -- $bin -n 16777216 "${@:2}" 2>/dev/null | tail -1; }
field() { python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); assert d["verified"], d; print(d["sort_s"])'; }
for round in $(seq 1 "$rounds"); do
  for input in random few-distinct; do
    for by in "" --by; do
      for ranks in 1 2; do
        case="$input${by:+ by}"
        ours=$(run "$ranks" --input "$input" $by | field)
        theirs=$(run 1 --input "$input" $by --rayon "$ranks" | field)
        echo "$case|$ranks|ours|$ours"
        echo "$case|$ranks|rayon|$theirs"
      done
    done
  done
done
