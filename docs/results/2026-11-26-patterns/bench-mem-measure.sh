#!/usr/bin/env bash
# The measurements of bench-mem.md: appends one JSON line per run to
# $OUT (default runs.jsonl here), each tagged with its label. Needs the
# smp-native and udp-native builds (cargo uat build --release --conduit
# smp|udp --fad native).
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-docs/results/2026-11-26-patterns/runs.jsonl}
REPS=${REPS:-5}
run() { # label env... -- launcher args -- bench args
  local label=$1; shift
  local line
  line=$(env "$@" 2>/dev/null | tail -1)
  echo "{\"label\":\"$label\",\"run\":$line}" >> "$OUT"
}
for i in $(seq "$REPS"); do
  for n in 1 2; do
    run "smp heat n=$n" scripts/run.sh --no-build --conduit smp -n $n -- heat --iters 100
    run "smp uts-mem n=$n" scripts/run.sh --no-build --conduit smp -n $n -- uts-mem
  done
  for c in on off; do
    run "udp heat 1024x1024x50 cache=$c" UAT_CACHE=$c scripts/run.sh --no-build --conduit udp --real-udp -n 2 -- heat --rows 1024 --cols 1024 --iters 50
    run "udp uts-mem cache=$c" UAT_CACHE=$c scripts/run.sh --no-build --conduit udp --real-udp -n 2 -- uts-mem
  done
done
for i in $(seq 3); do
  for b in 4K 64K 256K; do
    run "udp heat 1024x1024x50 cache=on block=$b" UAT_CACHE_BLOCK=$b scripts/run.sh --no-build --conduit udp --real-udp -n 2 -- heat --rows 1024 --cols 1024 --iters 50
    run "udp uts-mem cache=on block=$b" UAT_CACHE_BLOCK=$b scripts/run.sh --no-build --conduit udp --real-udp -n 2 -- uts-mem
  done
done
