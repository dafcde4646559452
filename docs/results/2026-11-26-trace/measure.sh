#!/usr/bin/env bash
# Issue 34's measurements. Run from the repository root with the variants
# built (cargo uat build --release --conduit smp|udp --fad native) and BASE
# the smp-native micro of the commit before the trace's hooks (53d7486).
#   docs/results/2026-11-26-trace/measure.sh OUT BASE_MICRO
# Writes OUT/spawn.jsonl (micro spawn, base and new alternating),
# OUT/overhead.jsonl (UTS T1 and NQueens 12 at 1 and 2 ranks with tracing
# off, stats, timeline and work/span, alternating), OUT/size.jsonl (trace
# bytes and records per spawn), OUT/clock.jsonl (each rank's alignment).
set -uo pipefail
out=${1:?OUT}; base=${2:?BASE_MICRO}
mkdir -p "$out"
last() { tail -n 1; }
for rep in 1 2 3 4 5 6 7; do
  for which in base new; do
    prog=micro; [ "$which" = base ] && prog=$base
    line=$(scripts/run.sh --no-build -n 1 -- "$prog" spawn 2>/dev/null | last)
    echo "{\"which\":\"$which\",\"micro\":$line}" >>"$out/spawn.jsonl"
  done
done
mode() { # MODE -> environment
  case $1 in
    off) echo "" ;;
    stats) echo "UAT_TRACE=$out/t UAT_TRACE_MODE=stats" ;;
    timeline) echo "UAT_TRACE=$out/t" ;;
    workspan) echo "UAT_WORKSPAN=on" ;;
  esac
}
for rep in 1 2 3 4 5; do
  for n in 1 2; do
    for bench in "uts -t 1 -a 3 -d 10 -b 4 -r 19" "nqueens 12"; do
      for m in off stats timeline workspan; do
        rm -rf "$out/t"
        line=$(env $(mode $m) scripts/run.sh --no-build -n "$n" -- $bench 2>/dev/null | last)
        echo "{\"mode\":\"$m\",\"ranks\":$n,\"run\":$line}" >>"$out/overhead.jsonl"
        if [ "$m" = timeline ] && [ "$rep" = 1 ]; then
          bytes=$(du -cb "$out"/t/rank-*.uatrace | tail -n 1 | cut -f1)
          recorded=$(python3 -c "import json,sys; print(json.load(open('$out/t/stats.json'))['recorded'])")
          echo "{\"bench\":\"${bench%% *}\",\"ranks\":$n,\"rank_file_bytes\":$bytes,\"records\":$recorded,\"run\":$line}" >>"$out/size.jsonl"
        fi
      done
    done
  done
done
for rep in 1 2 3; do
  for n in 2 4; do
    for how in "--conduit smp" "--conduit udp --real-udp"; do
      rm -rf "$out/t"
      UAT_TRACE="$out/t" scripts/run.sh --no-build $how -n "$n" -- uts -t 1 -a 3 -d 10 -b 4 -r 19 >/dev/null 2>&1
      for f in "$out"/t/rank-*.uatrace; do
        echo "{\"how\":\"$how\",\"ranks\":$n,\"header\":$(sed -n 2p "$f")}" >>"$out/clock.jsonl"
      done
    done
  done
done
rm -rf "$out/t"
