#!/usr/bin/env bash
# Strong scaling of the benchmarks over rank counts and fetch-and-add modes,
# from prebuilt binaries (for machines that cannot build, such as a compute
# node). Writes one JSON line per run (the benchmark's own, plus "label" and
# "oversubscribed") to --out, and a progress line per run to stderr.
#
#   scripts/scaling.sh --bin-dir DIR [--ranks "1 2 4 8 16"] [--modes "native am rdma-emulated"]
#                      [--conduit smp] [--out FILE] [--timeout S] [--reps K] -- BENCH ARGS... [-- BENCH ARGS...]
#
# DIR holds one folder per mode (DIR/native, DIR/am, DIR/rdma-emulated) with
# the benchmark binaries, and DIR/uat-report (or this checkout's
# target/report/release/uat-report) writes each line. rdma-emulated runs
# need a core per poller: ranks above cores/2 are skipped unless
# --oversubscribe, and any run with more spinning threads than cores is
# labelled "oversubscribed": true.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin_dir="" ranks="1 2 4 8 16" modes="native am rdma-emulated" conduit=smp out=/dev/stdout timeout_s=300 reps=1 oversub=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bin-dir) bin_dir=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --conduit) conduit=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --oversubscribe) oversub=1; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    --) shift; break ;;
    *) echo "scaling.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -n "$bin_dir" ] || { echo "scaling.sh: --bin-dir is required" >&2; exit 2; }
[ $# -gt 0 ] || { echo "scaling.sh: no benchmark given (after --)" >&2; exit 2; }
cores=$(nproc)

# Split the remaining arguments into benchmarks at each "--".
benches=()
current=""
for a in "$@"; do
  if [ "$a" = "--" ]; then benches+=("$current"); current=""; else current="${current:+$current }$a"; fi
done
[ -z "$current" ] || benches+=("$current")

[ ! -x "$bin_dir/cargo-uat" ] || export UAT_LAUNCHER="$bin_dir/cargo-uat"
uat=$("$root/scripts/launcher.sh") || exit 2
if [ -x "$bin_dir/uat-report" ]; then report_tool="$bin_dir/uat-report"
elif [ -x "$root/target/report/release/uat-report" ]; then report_tool="$root/target/report/release/uat-report"
else echo "scaling.sh: no uat-report in $bin_dir or target/report/release/ (it writes the lines)" >&2; exit 2; fi
# Each run's stdout and stderr, until the tool has read them.
scratch=$(mktemp -d) || exit 2
trap 'rm -rf "$scratch"' EXIT
failures=0
for b in "${benches[@]}"; do
  for m in $modes; do
    for n in $ranks; do
      over=$("$uat" uat oversubscribed --fad "$m" --ranks "$n" --cores "$cores")
      if [ "$over" = true ] && [ "$oversub" = 0 ]; then
        echo "scaling: skip $m n=$n: more spinning threads than $cores cores (--oversubscribe to run it)" >&2
        continue
      fi
      for ((r = 0; r < reps; r++)); do
        echo "scaling: $b | $m | $n ranks$([ "$over" = true ] && echo ' (oversubscribed)')" >&2
        # shellcheck disable=SC2086
        "$root/scripts/run.sh" --no-build --conduit "$conduit" --timeout "$timeout_s" -n "$n" -- "$bin_dir/$m/"$b \
          >"$scratch/out" 2>"$scratch/err"
        rc=$?
        # The benchmark's line with label and oversubscribed, or a failure
        # record; exit 1 for a failed run.
        line=$("$report_tool" scaling-line --label "$b" --fad "$m" --ranks "$n" --exit "$rc" \
          --oversubscribed "$over" --stdout "$scratch/out" --stderr "$scratch/err")
        case $? in
          0) ;;
          1) failures=$((failures + 1)); echo "scaling: FAILED ($rc): $(tail -n 2 "$scratch/err" | tr '\n' ' ')" >&2 ;;
          *) echo "scaling.sh: error: uat-report scaling-line failed (see above)" >&2; exit 2 ;;
        esac
        echo "$line" >>"$out"
      done
    done
  done
done
echo "scaling: done, $failures failed runs" >&2
[ "$failures" = 0 ]
